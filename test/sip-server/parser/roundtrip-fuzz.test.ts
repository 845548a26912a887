// RFC 3261 example messages, serializer round-trips, header/URI helpers, stream framing, and a
// bounded fast-check fuzz proving parseMessage only ever throws SipParseError and never hangs.
import { expect } from 'chai';
import fc from 'fast-check';
import { Headers, NameAddr, SipParseError, SipRequest, SipResponse, SipUri, StreamFramer, parseMessage, parseNameAddr, parseUri, parseVia, splitList } from '../../../sip-server/message';
import { RFC4475 } from './rfc4475-vectors';

const crlf = (lines: string[]): string => lines.join('\r\n');

// RFC 3261 section 24.2 (F1 INVITE Alice -> atlanta proxy) and section 10.2.x style REGISTER / 200.
const RFC3261_INVITE = crlf([
  'INVITE sip:bob@biloxi.com SIP/2.0',
  'Via: SIP/2.0/UDP pc33.atlanta.com;branch=z9hG4bKnashds8',
  'Max-Forwards: 70',
  'To: Bob <sip:bob@biloxi.com>',
  'From: Alice <sip:alice@atlanta.com>;tag=1928301774',
  'Call-ID: a84b4c76e66710',
  'CSeq: 314159 INVITE',
  'Contact: <sip:alice@pc33.atlanta.com>',
  'Content-Type: application/sdp',
  'Content-Length: 146',
  '',
  'v=0\r\no=alice 2890844526 2890844526 IN IP4 pc33.atlanta.com\r\ns=-\r\nc=IN IP4 pc33.atlanta.com\r\nt=0 0\r\nm=audio 49172 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n',
]);
const RFC3261_200 = crlf([
  'SIP/2.0 200 OK',
  'Via: SIP/2.0/UDP server10.biloxi.com;branch=z9hG4bKnashds8;received=192.0.2.3',
  'Via: SIP/2.0/UDP bigbox3.site3.atlanta.com;branch=z9hG4bK77ef4c2312983.1;received=192.0.2.2',
  'Via: SIP/2.0/UDP pc33.atlanta.com;branch=z9hG4bK776asdhds ;received=192.0.2.1',
  'To: Bob <sip:bob@biloxi.com>;tag=a6c85cf',
  'From: Alice <sip:alice@atlanta.com>;tag=1928301774',
  'Call-ID: a84b4c76e66710@pc33.atlanta.com',
  'CSeq: 314159 INVITE',
  'Contact: <sip:bob@192.0.2.4>',
  'Content-Length: 0',
  '',
  '',
]);
const RFC3261_REGISTER = crlf([
  'REGISTER sip:registrar.biloxi.com SIP/2.0',
  'Via: SIP/2.0/UDP bobspc.biloxi.com:5060;branch=z9hG4bKnashds7',
  'Max-Forwards: 70',
  'To: Bob <sip:bob@biloxi.com>',
  'From: Bob <sip:bob@biloxi.com>;tag=456248',
  'Call-ID: 843817637684230@998sdasdh09',
  'CSeq: 1826 REGISTER',
  'Contact: <sip:bob@192.0.2.4>',
  'Expires: 7200',
  'Content-Length: 0',
  '',
  '',
]);

describe('parser: RFC 3261 examples and round-trips', () => {
  it('parses the RFC 3261 24.2 INVITE', () => {
    const m = parseMessage(RFC3261_INVITE) as SipRequest;
    expect(m.method).to.equal('INVITE');
    expect(m.to.displayName).to.equal('Bob');
    expect(m.from.tag).to.equal('1928301774');
    expect(m.cseq).to.deep.equal({ seq: 314159, method: 'INVITE' });
    expect(m.body.length).to.equal(146);
  });

  it('parses the 200 OK with three Vias and received params', () => {
    const m = parseMessage(RFC3261_200) as SipResponse;
    expect(m.status).to.equal(200);
    expect(m.vias.map((v) => v.received)).to.deep.equal(['192.0.2.3', '192.0.2.2', '192.0.2.1']);
    expect(m.to.tag).to.equal('a6c85cf');
  });

  it('REGISTER: makeResponse copies Via/From/To/Call-ID/CSeq and adds a To tag', () => {
    const m = parseMessage(RFC3261_REGISTER) as SipRequest;
    const res = m.makeResponse(200);
    expect(res.headers.getAll('Via')).to.deep.equal(m.headers.getAll('Via'));
    expect(res.to.tag).to.be.a('string');
    expect(res.callId).to.equal(m.callId);
    expect(res.headers.get('CSeq')).to.equal('1826 REGISTER');
    expect(m.makeResponse(100).to.tag).to.equal(undefined);
  });

  const valid = [
    RFC3261_INVITE,
    RFC3261_200,
    RFC3261_REGISTER,
    ...[
      'wsinv',
      'esc01',
      'escnull',
      'esc02',
      'lwsdisp',
      'longreq',
      'semiuri',
      'transports',
      'noreason',
      'badbranch',
      'bcast',
      'bext01',
      'cparam01',
      'cparam02',
      'invut',
      'regaut01',
      'regescrt',
      'sdp01',
      'unkscm',
      'unksm2',
      'zeromf',
      'inv2543',
      'novelsc',
    ].map((k) => RFC4475[k]),
  ];
  it(`serialize(parse(x)) re-parses to the same start line, headers and body (${valid.length} messages)`, () => {
    for (const text of valid) {
      const a = parseMessage(text);
      const wire = a.toBuffer();
      const b = parseMessage(wire);
      expect(b.startLine()).to.equal(a.startLine());
      expect([...b.headers].filter(([n]) => n !== 'Content-Length')).to.deep.equal([...a.headers].filter(([n]) => n !== 'Content-Length'));
      expect(Buffer.compare(a.body, b.body)).to.equal(0);
      expect(parseMessage(b.toBuffer()).toString()).to.equal(wire.toString()); // fixed point
    }
  });

  it('the serializer writes Content-Length from the real body and expands compact names', () => {
    const m = parseMessage(RFC4475.esc01);
    m.bodyText = 'x';
    const s = m.toString();
    expect(s).to.match(/\r\nContent-Length: 1\r\n\r\nx$/);
    expect(s).to.match(/\r\nCall-ID: esc01/);
    expect(s).to.match(/\r\nContent-Type: application\/sdp\r\n/);
  });
});

describe('message helpers', () => {
  it('Headers: case-insensitive, compact forms, ordered multi-values, prepend/shift', () => {
    const h = new Headers();
    h.append('v', 'SIP/2.0/UDP a;branch=z9hG4bK1');
    h.append('VIA', 'SIP/2.0/UDP b;branch=z9hG4bK2');
    h.append('X-Custom', '1');
    h.prepend('Via', 'SIP/2.0/UDP c;branch=z9hG4bK3');
    expect(h.getAll('via')).to.have.length(3);
    expect(h.get('Via')).to.match(/ c;/);
    expect(h.shift('Via')).to.match(/ c;/);
    expect([...h].map(([n]) => n)).to.deep.equal(['Via', 'Via', 'X-Custom']);
    h.set('x-custom', ['2', '3']);
    expect(h.getAll('X-CUSTOM')).to.deep.equal(['2', '3']);
    expect(h.delete('X-Custom')).to.equal(2);
  });

  it('splitList ignores commas inside quotes and angle brackets', () => {
    expect(splitList('"Doe, John" <sip:j@x;a=1,2>;q=1, <sip:k@y>')).to.deep.equal(['"Doe, John" <sip:j@x;a=1,2>;q=1', '<sip:k@y>']);
    expect(splitList('"a \\" , b" <sip:x@y>, c')).to.deep.equal(['"a \\" , b" <sip:x@y>', 'c']);
  });

  it('Contact values split only outside quotes/brackets', () => {
    const text = RFC3261_REGISTER.replace('Contact: <sip:bob@192.0.2.4>', 'Contact: "Bob, at home" <sip:bob@192.0.2.4;x=a,b>;expires=60, <sip:bob@[2001:db8::1]:5070>');
    const m = parseMessage(text);
    expect(m.contacts.map((c) => c.uri.toString())).to.deep.equal(['sip:bob@192.0.2.4;x=a,b', 'sip:bob@[2001:db8::1]:5070']);
    expect(m.contacts[0].displayName).to.equal('Bob, at home');
  });

  it('URIs: IPv6 references, ports, params, headers, escapes survive a round-trip', () => {
    for (const s of ['sip:alice@[2001:db8::10]:5070;transport=tcp', 'sips:bob:pw@example.com;lr?Subject=hi%20there&Priority=urgent', 'sip:%61lice@10.0.0.1', 'sip:host.example.com']) {
      expect(parseUri(s).toString()).to.equal(s);
    }
    const u = parseUri('sip:alice@[2001:db8::10]:5070') as SipUri;
    expect(u.hostname).to.equal('2001:db8::10');
    expect(u.port).to.equal(5070);
    for (const bad of ['sip:', 'sip:alice@', 'sip:a@b:99999', 'sip:a@[::1', 'sip:a b@c', 'noscheme']) {
      expect(() => parseUri(bad), bad).to.throw();
    }
  });

  it('name-addr and Via builders round-trip', () => {
    const na = new NameAddr(parseUri('sip:a@b.com'), { tag: 'x1' }, 'A "quoted" name');
    expect(parseNameAddr(na.toString()).displayName).to.equal('A "quoted" name');
    const v = parseVia('SIP/2.0/TCP [2001:db8::2]:5061;branch=z9hG4bKabc;rport=5000;received=10.0.0.1');
    expect(v.host).to.equal('[2001:db8::2]');
    expect(v.port).to.equal(5061);
    expect(v.rport).to.equal(5000);
    expect(parseVia(v.toString()).toString()).to.equal(v.toString());
  });
});

describe('stream framing (TCP)', () => {
  const one = Buffer.from(RFC3261_INVITE);
  it('frames messages split at every byte boundary and glued together, with CRLF keep-alives between', () => {
    const stream = Buffer.concat([Buffer.from('\r\n\r\n'), one, Buffer.from('\r\n'), one, one]);
    for (const step of [1, 7, 100, stream.length]) {
      const f = new StreamFramer();
      const frames: Buffer[] = [];
      let pings = 0;
      for (let i = 0; i < stream.length; i += step) {
        for (const ev of f.push(stream.subarray(i, i + step))) {
          if (ev.type === 'message') frames.push(ev.data);
          else if (ev.type === 'keepalive' && ev.ping) pings++;
          else if (ev.type === 'error') throw new Error(ev.reason);
        }
      }
      expect(frames, `step ${step}`).to.have.length(3);
      for (const fr of frames) expect(Buffer.compare(fr, one)).to.equal(0);
      expect(pings).to.be.greaterThan(0);
    }
  });

  it('rejects a bad Content-Length and an endless header section', () => {
    const f = new StreamFramer(4096);
    expect(f.push(Buffer.from('OPTIONS sip:a SIP/2.0\r\nContent-Length: -1\r\n\r\n'))[0]).to.deep.include({ type: 'error' });
    const g = new StreamFramer(4096);
    const evs = g.push(Buffer.alloc(5000, 0x41));
    expect(evs[0]).to.deep.include({ type: 'error' });
  });
});

describe('parser fuzz (fast-check, bounded)', function () {
  this.timeout(60_000);
  const seeds = [RFC3261_INVITE, RFC3261_200, RFC3261_REGISTER, RFC4475.wsinv, RFC4475.longreq, RFC4475.esc01].map((s) => Buffer.from(s));

  function check(buf: Buffer): void {
    const t0 = Date.now();
    try {
      const m = parseMessage(buf);
      m.toBuffer(); // a parsed message must serialize
      // helpers must not blow up with anything but a clean Error
      try {
        void m.from;
        void m.to;
        void m.vias;
        void m.cseq;
        void m.contacts;
      } catch (e) {
        expect(e).to.be.instanceOf(Error);
      }
    } catch (e) {
      if (!(e instanceof SipParseError)) throw new Error(`non-SipParseError thrown: ${(e as Error)?.stack}`);
    }
    expect(Date.now() - t0, 'parse time').to.be.lessThan(500);
  }

  it('random bytes: only SipParseError, never a hang (2,000 cases)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), (a) => check(Buffer.from(a))),
      { numRuns: 2000 },
    );
  });

  it('mutated valid messages: byte flips, insertions, truncations (3,000 cases)', () => {
    const mutation = fc.record({
      seed: fc.integer({ min: 0, max: seeds.length - 1 }),
      ops: fc.array(
        fc.record({
          kind: fc.constantFrom('flip', 'insert', 'delete', 'truncate'),
          pos: fc.nat(),
          byte: fc.constantFrom(0x00, 0x0a, 0x0d, 0x20, 0x22, 0x2c, 0x3a, 0x3b, 0x3c, 0x3e, 0x40, 0x5c, 0x25, 0xff, 0x41, 0x39),
        }),
        { maxLength: 8 },
      ),
    });
    fc.assert(
      fc.property(mutation, ({ seed, ops }) => {
        let buf = Buffer.from(seeds[seed]);
        for (const op of ops) {
          const p = buf.length ? op.pos % buf.length : 0;
          if (op.kind === 'flip' && buf.length) buf[p] = op.byte;
          else if (op.kind === 'insert') buf = Buffer.concat([buf.subarray(0, p), Buffer.from([op.byte]), buf.subarray(p)]);
          else if (op.kind === 'delete') buf = Buffer.concat([buf.subarray(0, p), buf.subarray(p + 1)]);
          else buf = buf.subarray(0, p);
        }
        check(buf);
      }),
      { numRuns: 3000 },
    );
  });

  it('header-shaped garbage lines after a valid start line (1,000 cases)', () => {
    const line = fc.stringMatching(/^[ -~\t]{0,80}$/);
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), (lines) => {
        check(Buffer.from(`INVITE sip:a@b SIP/2.0\r\n${lines.join('\r\n')}\r\n\r\n`));
      }),
      { numRuns: 1000 },
    );
  });

  it('size and count limits hold: huge messages and header floods are rejected quickly', () => {
    const many = 'INVITE sip:a@b SIP/2.0\r\n' + 'X-A: b\r\n'.repeat(5000) + '\r\n';
    expect(() => parseMessage(many)).to.throw(SipParseError, /too many header fields/);
    expect(() => parseMessage(Buffer.alloc(70_000, 0x41))).to.throw(SipParseError, /too large/);
    const longLine = `INVITE sip:a@b SIP/2.0\r\nX-A: ${'b'.repeat(20_000)}\r\n\r\n`;
    expect(() => parseMessage(longLine)).to.throw(SipParseError, /too long/);
  });
});
