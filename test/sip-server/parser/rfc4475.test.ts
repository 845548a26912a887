// RFC 4475 torture tests: every valid message parses with the right values, every invalid one is
// rejected with SipParseError, and a response is possible exactly where the RFC expects one.
import { expect } from 'chai';
import { parseMessage, SipParseError, SipRequest, SipResponse, SipUri, OtherUri } from '../../../sip-server/message';
import { RFC4475 } from './rfc4475-vectors';

function req(name: string): SipRequest {
  const m = parseMessage(RFC4475[name]);
  expect(m).to.be.instanceOf(SipRequest);
  return m as SipRequest;
}

function parseError(text: string | Buffer): SipParseError {
  try {
    parseMessage(text);
  } catch (e) {
    expect(e).to.be.instanceOf(SipParseError);
    return e as SipParseError;
  }
  throw new Error('expected a SipParseError');
}

const SDP = 'v=0\r\no=mhandley 29739 7272939 IN IP4 192.0.2.198\r\ns=-\r\nc=IN IP4 192.0.2.198\r\nt=0 0\r\nm=audio 49217 RTP/AVP 0 12\r\nm=video 3227 RTP/AVP 31\r\na=rtpmap:31 LPC\r\n';

describe('parser: RFC 4475 valid messages (3.1.1, 3.2, 3.3, 3.4)', () => {
  it('wsinv: folding, LWS everywhere, compact forms, escaped quotes, leading zeros', () => {
    const m = req('wsinv');
    expect(m.method).to.equal('INVITE');
    expect(m.uri).to.equal('sip:vivekg@chair-dnrc.example.com;unknownparam');
    expect((m.requestUri as SipUri).params).to.have.property('unknownparam', null);
    expect(m.to.tag).to.equal('1918181833n');
    expect(m.from.displayName).to.equal('J Rosenberg \\"');
    expect(m.from.tag).to.equal('98asjd8');
    expect(m.maxForwards).to.equal(68);
    expect(m.cseq).to.deep.equal({ seq: 9, method: 'INVITE' });
    const vias = m.vias;
    expect(vias.map((v) => `${v.transport} ${v.host} ${v.branch}`)).to.deep.equal(['UDP 192.0.2.2 390skdjuw', 'TCP spindle.example.com z9hG4bK9ikj8', 'UDP 192.168.255.111 z9hG4bK30239']);
    expect(m.headers.get('Subject')).to.equal('');
    expect(m.headers.get('NewFangledHeader')).to.equal('newfangled value continued newfangled value');
    expect(m.headers.get('UnknownHeaderWithUnusualValue')).to.equal(';;,,;;,;');
    expect(m.routes[0].uri.toString()).to.equal('sip:services.example.com;lr;unknownwith=value;unknown-no-value');
    const c = m.contacts[0];
    expect(c.displayName).to.equal('Quoted string ""');
    expect(c.params).to.deep.equal({ newparam: 'newvalue', secondparam: null, q: '0.33' });
    expect(m.body.length).to.equal(150);
  });

  it('intmeth: unusual token characters, quoted NUL/BEL/DEL, UTF-8 parameter and header', () => {
    const method = "!interesting-Method0123456789_*+`.%indeed'~";
    const text = Buffer.concat([
      Buffer.from(
        `${method} sip:1_unusual.URI~(to-be!sure)&isn't+it$/crazy?,/;;*:&it+has=1,weird!*pas$wo~d_too.(doesn't-it)@example.com SIP/2.0\r\n` +
          "Via: SIP/2.0/TCP host1.example.com;branch=z9hG4bK-.!%66*_+`'~\r\n",
      ),
      Buffer.from('To: "BEL:\\\x07 NUL:\\\x00 DEL:\\\x7F" <sip:1_unusual.URI~(to-be!sure)&isn\'t+it$/crazy?,/;;*@example.com>\r\n', 'latin1'),
      Buffer.from(
        "From: token1~` token2'+_ token3*%!.- <sip:mundane@example.com>;fromParam''~+*_!.-%=\"работающий\";tag=_token~1'+`*%!-.\r\n" +
          'Call-ID: intmeth.word%ZK-!.*_+\'@word`~)(><:\\/"][?}{\r\n' +
          `CSeq: 139122385 ${method}\r\nMax-Forwards: 255\r\n` +
          "extensionHeader-!.%*+_`'~:\uFEFF大停電\r\nContent-Length: 0\r\n\r\n",
      ),
    ]);
    const m = parseMessage(text) as SipRequest;
    expect(m.method).to.equal(method);
    const ruri = m.requestUri as SipUri;
    expect(ruri.user).to.equal("1_unusual.URI~(to-be!sure)&isn't+it$/crazy?,/;;*");
    expect(ruri.password).to.equal("&it+has=1,weird!*pas$wo~d_too.(doesn't-it)");
    expect(m.to.displayName).to.equal('BEL:\x07 NUL:\x00 DEL:\x7F');
    expect(m.from.displayName).to.equal("token1~` token2'+_ token3*%!.-");
    expect(m.from.params["fromparam''~+*_!.-%"]).to.equal('"работающий"');
    expect(m.from.tag).to.equal("_token~1'+`*%!-.");
    expect(m.callId).to.equal('intmeth.word%ZK-!.*_+\'@word`~)(><:\\/"][?}{');
    expect(m.headers.get("extensionHeader-!.%*+_`'~")).to.equal('\uFEFF大停電');
    expect(m.topVia!.branch).to.equal("z9hG4bK-.!%66*_+`'~");
  });

  it('esc01 / escnull / esc02: escapes are kept, % in tokens is not an escape', () => {
    const a = req('esc01');
    expect((a.requestUri as SipUri).user).to.equal('sips%3Auser%40example.com');
    expect((a.requestUri as SipUri).host).to.equal('example.net');
    expect((a.contacts[0].uri as SipUri).params).to.have.property('%6c%72', null);
    const b = req('escnull');
    expect(b.contacts.map((c) => (c.uri as SipUri).user)).to.deep.equal(['%00', '%00%00']);
    const c = req('esc02');
    expect(c.method).to.equal('RE%47IST%45R');
    expect(c.headers.getAll('Contact')).to.have.length(2);
    expect(c.headers.get('C%6Fntact')).to.equal('<sip:alias2@host2.example.com>');
    expect(c.to.displayName).to.equal('%Z%45');
  });

  it('lwsdisp: display name directly followed by <', () => {
    expect(req('lwsdisp').from.displayName).to.equal('caller');
  });

  it('longreq: long values and 34 Vias in mixed spellings', () => {
    const m = req('longreq');
    expect(m.vias).to.have.length(34);
    expect(m.to.displayName).to.match(/^I have a user name of (extreme){10} proportion$/);
    expect(m.from.tag).to.have.length.greaterThan(100);
    expect(m.body.length).to.equal(150);
  });

  it('dblreq: extra octets after Content-Length in a datagram are discarded', () => {
    const m = req('dblreq');
    expect(m.method).to.equal('REGISTER');
    expect(m.body.length).to.equal(0);
  });

  it('semiuri: ; inside the user part of the Request-URI', () => {
    const m = req('semiuri');
    expect((m.requestUri as SipUri).user).to.equal('user;par=u%40example.net');
    expect((m.requestUri as SipUri).host).to.equal('example.com');
    expect(m.headers.getAll('Accept')).to.have.length(6);
  });

  it('transports: unknown Via transports', () => {
    expect(req('transports').vias.map((v) => v.transport)).to.deep.equal(['UDP', 'SCTP', 'TLS', 'UNKNOWN', 'TCP']);
  });

  it('mpart01: multipart body with binary octets is kept byte for byte', () => {
    const binary = Buffer.from([0x30, 0x82, 0x01, 0x52, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x0d, 0x0a, 0xff]);
    const body = Buffer.concat([
      Buffer.from(
        '--7a9cbec02ceef655\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: binary\r\n\r\nHello\r\n--7a9cbec02ceef655\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\n\r\n',
      ),
      binary,
      Buffer.from('\r\n--7a9cbec02ceef655--\r\n'),
    ]);
    const head = `MESSAGE sip:kumiko@example.org SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK-d87543-4dade06d0bdb11ee-1--d87543-;rport\r\nMax-Forwards: 70\r\nRoute: <sip:127.0.0.1:5080>\r\nContact: <sip:fluffy@127.0.0.1:5070>\r\nTo: <sip:kumiko@example.org>\r\nFrom: <sip:fluffy@example.com>;tag=2fb0dcc9\r\nCall-ID: 3d9485ad0c49859b@Zmx1ZmZ5LW1hYy0xNi5sb2NhbA..\r\nCSeq: 1 MESSAGE\r\nContent-Transfer-Encoding: binary\r\nContent-Type: multipart/mixed;boundary=7a9cbec02ceef655\r\nDate: Sat, 15 Oct 2005 04:44:56 GMT\r\nUser-Agent: SIPimp.org/0.2.5 (curses)\r\nContent-Length: ${body.length}\r\n\r\n`;
    const m = parseMessage(Buffer.concat([Buffer.from(head), body])) as SipRequest;
    expect(Buffer.compare(m.body, body)).to.equal(0);
    const again = parseMessage(m.toBuffer());
    expect(Buffer.compare(again.body, body)).to.equal(0);
  });

  it('unreason: UTF-8 reason phrase; noreason: empty reason phrase', () => {
    const text = `SIP/2.0 200 = 2**3 * 5**2 но сто девяносто девять - простое\r\nVia: SIP/2.0/UDP 192.0.2.198;branch=z9hG4bK1324923\r\nCall-ID: unreason.1234ksdfak3j2erwedfsASdf\r\nCSeq: 35 INVITE\r\nFrom: sip:user@example.com;tag=11141343\r\nTo: sip:user@example.edu;tag=2229\r\nContent-Length: ${Buffer.byteLength(SDP)}\r\nContent-Type: application/sdp\r\nContact: <sip:user@host198.example.com>\r\n\r\n${SDP}`;
    const a = parseMessage(text) as SipResponse;
    expect(a.status).to.equal(200);
    expect(a.reason).to.equal('= 2**3 * 5**2 но сто девяносто девять - простое');
    const b = parseMessage(RFC4475.noreason) as SipResponse;
    expect(b.status).to.equal(100);
    expect(b.reason).to.equal('');
  });

  it("badbranch, bcast, bext01, cparam01/02, invut, regaut01, regescrt, sdp01, zeromf parse (semantics are the TU's)", () => {
    expect(req('badbranch').topVia!.branch).to.equal('z9hG4bK');
    expect((parseMessage(RFC4475.bcast) as SipResponse).vias[1].host).to.equal('255.255.255.255');
    expect(req('bext01').headers.getAll('Require')).to.deep.equal(['nothingSupportsThis', 'nothingSupportsThisEither']);
    const c1 = req('cparam01').contacts[0];
    expect(c1.uri.toString()).to.equal('sip:+19725552222@gw1.example.net');
    expect(c1.params).to.have.property('unknownparam', null);
    expect((req('cparam02').contacts[0].uri as SipUri).params).to.have.property('unknownparam', null);
    expect(req('invut').contentType).to.equal('application/unknownformat');
    expect(req('regaut01').headers.get('Authorization')).to.equal('NoOneKnowsThisScheme opaque-data=here');
    expect((req('regescrt').contacts[0].uri as SipUri).headers).to.deep.equal({ Route: '%3Csip:sip.example.com%3E' });
    expect(req('sdp01').headers.get('Accept')).to.equal('text/nobodyKnowsThis');
    expect(req('zeromf').maxForwards).to.equal(0);
  });

  it('unkscm, novelsc, unksm2: unknown URI schemes are carried, not rejected', () => {
    expect(req('unkscm').requestUri).to.be.instanceOf(OtherUri);
    expect(req('novelsc').requestUri.scheme).to.equal('soap.beep');
    const m = req('unksm2');
    expect(m.to.uri.toString()).to.equal('isbn:2983792873');
    expect(m.from.uri.scheme).to.equal('http');
    expect(m.contacts[0].uri.toString()).to.equal('name:John_Smith');
  });

  it('inv2543: RFC 2543 syntax (no branch, no tags, no Content-Length over UDP)', () => {
    const m = req('inv2543');
    expect(m.topVia!.branch).to.equal(undefined);
    expect(m.from.tag).to.equal(undefined);
    expect(m.to.params).to.have.property('user', 'phone');
    expect(m.bodyText).to.match(/^v=0/);
  });
});

describe('parser: RFC 4475 invalid messages (3.1.2, 3.3)', () => {
  // name -> [expected status, can a response be formed?]
  const cases: Record<string, [number, boolean, RegExp]> = {
    badinv01: [400, false, /Via/],
    clerr: [400, true, /Content-Length 9999/],
    ncl: [400, true, /Content-Length/],
    scalar02: [400, true, /CSeq|Max-Forwards|Expires/],
    scalarlg: [400, false, /CSeq|Retry-After/],
    quotbal: [400, true, /To/],
    ltgtruri: [400, true, /Request-URI/],
    lwsruri: [400, true, /Request-Line/],
    lwsstart: [400, true, /Request-Line/],
    trws: [400, true, /Request-Line/],
    escruri: [400, true, /Request-URI must not contain headers/],
    baddate: [400, true, /Date/],
    regbadct: [400, true, /Contact/],
    badaspec: [400, true, /To/],
    baddn: [400, true, /From|To/],
    badvers: [505, true, /version/],
    mismatch01: [400, true, /CSeq method/],
    mismatch02: [400, true, /CSeq method/],
    bigcode: [400, false, /Status-Line/],
    insuf: [400, false, /missing/],
    mcl01: [400, true, /Content-Length/],
    multi01: [400, true, /more than one/],
  };
  for (const [name, [status, respondable, reason]] of Object.entries(cases)) {
    it(`${name}: SipParseError ${status}${respondable ? ', response possible' : ', dropped'}`, () => {
      const e = parseError(RFC4475[name]);
      expect(e.status).to.equal(status);
      expect(e.message).to.match(reason);
      expect(e.canRespond).to.equal(respondable);
      if (respondable) {
        const res = (e.partial as SipRequest).makeResponse(e.status);
        expect(res.headers.get('Call-ID')).to.equal((e.partial as SipRequest).headers.get('Call-ID'));
        expect(res.headers.getAll('Via').length).to.be.greaterThan(0);
      }
    });
  }
});
