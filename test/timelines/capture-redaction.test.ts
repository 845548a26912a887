// Issue 32, item 11: a call's SIP ladder and pcap must not carry what replays a digest answer or
// cracks a password offline (nonce, cnonce, response, opaque) or decrypts its SRTP (a=crypto keys).
// A registered extension (sipp) answers the platform's 407 and calls a number with an SDES-SRTP
// offer (rtpengine on loopback: the platform answers with its own key); then the ladder and the
// pcap, read through the API, hold the digest header with its username and no secret value, and
// neither key. The blanking itself (length kept, other schemes, Authentication-Info) is unit-tested
// at the end.
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { redactSipBytes, redactSipText } from '../../core/sip/capture-redact';
import { parseDigest } from '../../media-app/kit/sip-digest';
import { sippMediaPort } from '../../testkit/ports';
import { Rtpengine } from '../../testkit/rtpengine';
import { createExtension, killAllSipp, SIPP_SDP, sipp, until } from '../../testkit/media-app/harness';
import { phoneCalls, startStack, type Stack } from '../xfer/support';
import { bufferBody } from '../../testkit/buffer-body';

interface Msg {
  method: string;
  direction: string;
  raw: string;
}

const CALLER_KEY = 'WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz';
const SRTP_SDP = SIPP_SDP.replace('RTP/AVP', 'RTP/SAVP') + `\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${CALLER_KEY}|2^20|1:4`;

describe('timelines: the ladder and pcap keep no digest secrets or SRTP keys', function () {
  this.timeout(120_000);
  let rtp: Rtpengine;
  let s: Stack;
  let callId = '';
  let sent = '';
  let user = '';

  before(async () => {
    rtp = await Rtpengine.create();
    s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SIP_CAPTURE: 'on', RTPENGINE_NG: rtp.ng });
    const cid = s.f.customer.id;
    const ext = await createExtension(cid);
    user = ext.ext.username;
    const flow = await flowsRepo(s.t.ctx.db).create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, { type: 'echo', option: { duration: 30_000 } }]) } as never);
    const number = `+8991400${String(Date.now()).slice(-5)}`;
    await numbersRepo(s.t.ctx.db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    const scenario = phoneCalls(user, ext.domain, number).split(SIPP_SDP).join(SRTP_SDP);
    const r = await sipp(scenario, [`127.0.0.1:${s.p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', user, '-ap', ext.password, '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 }).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    sent = r.messages;
    const row = await until(async () => (await s.t.ctx.db('calls').where({ customer_id: cid, status: 'hangup' }).first()) as { id: string } | undefined, 15_000, 'the call hung up');
    callId = row.id;
    await s.p.capture!.capture.flush();
  });
  after(async () => {
    killAllSipp();
    await s?.close();
    await rtp?.dispose();
  });

  /** The secrets the call's messages carried on the wire, from sipp's own trace. */
  function secrets(): string[] {
    const auth = /^Proxy-Authorization: *(.+?)\r?$/m.exec(sent)?.[1];
    const challenge = /^Proxy-Authenticate: *(.+?)\r?$/m.exec(sent)?.[1];
    const d = parseDigest(auth)!;
    const platformKey = [...sent.matchAll(/inline:([A-Za-z0-9+/=]+)/g)].map((m) => m[1]!).find((k) => k !== CALLER_KEY);
    expect(d, 'sipp answered the 407').to.include.keys('nonce', 'response', 'cnonce');
    expect(platformKey, 'the platform answered with its own SRTP key').to.be.a('string');
    return [d.nonce!, d.response!, d.cnonce!, parseDigest(challenge)!.nonce!, CALLER_KEY, platformKey!];
  }

  it('sip-analysis: the INVITE keeps its digest header and username, not nonce, cnonce or response; no a=crypto key', async () => {
    const res = await s.api.get(`/timelines/calls/${callId}/sip-analysis`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const msgs = res.body.sip_messages as Msg[];
    const all = msgs.map((m) => m.raw).join('\n');
    for (const secret of secrets()) expect(all, secret).to.not.include(secret);
    const invite = msgs.find((m) => m.direction === 'incoming' && /^INVITE /.test(m.raw) && /Proxy-Authorization:/i.test(m.raw));
    expect(invite, 'the authenticated INVITE is in the ladder').to.not.equal(undefined);
    const header = /^Proxy-Authorization: *(.+?)\r?$/m.exec(invite!.raw)![1]!;
    expect(parseDigest(header)).to.include({ username: user, algorithm: 'MD5', qop: 'auth' }).and.to.include.keys('realm', 'uri', 'nc');
    expect(parseDigest(header)!.response).to.match(/^\*+$/);
    expect(all).to.match(/a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\*{40}\|2\^20\|1:4/);
    // each message keeps its length: the Content-Length of every SDP still matches its body
    for (const m of msgs) {
      const [head, body] = m.raw.split('\r\n\r\n');
      const cl = /^Content-Length: *(\d+)/im.exec(head!)?.[1];
      if (cl) expect(Buffer.byteLength(body ?? ''), m.method).to.equal(Number(cl));
    }
  });

  it('pcap: no secret in any packet', async () => {
    const res = await s.api.get(`/timelines/calls/${callId}/pcap`).buffer(true).parse(bufferBody);
    expect(res.status).to.equal(200);
    const pcap = res.body as Buffer;
    expect(pcap.includes(`Proxy-Authorization: Digest username="${user}"`), 'the header is there').to.equal(true);
    for (const secret of secrets()) expect(pcap.includes(secret), secret).to.equal(false);
  });

  it('blanking: values only, length kept; other schemes keep their name; messages without secrets are untouched', () => {
    const msg = [
      'INVITE sip:1@d SIP/2.0',
      'Via: SIP/2.0/UDP h;branch=z9hG4bK1',
      'authorization: Digest username="u", realm="d", nonce="n1", uri="sip:1@d", response="abc", algorithm=MD5, qop=auth, nc=00000001, cnonce="c1", opaque=op',
      'WWW-Authenticate: Digest realm="d", nonce="n2", algorithm=MD5, qop="auth"',
      'Authentication-Info: nextnonce="n3", qop=auth, rspauth="r3", cnonce="c3", nc=00000001',
      'Proxy-Authorization: Bearer eyJhbGciOiJ',
      '  continued',
      'Content-Type: application/sdp',
      'Content-Length: 60',
      '',
      'a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:AAAA|2^31;inline:BBBB',
      'a=key-mgmt:mikey QUJD',
      '',
    ].join('\r\n');
    const out = redactSipText(msg);
    expect(out).to.have.length(msg.length);
    expect(out).to.include('username="u", realm="d", nonce="**", uri="sip:1@d", response="***", algorithm=MD5, qop=auth, nc=00000001, cnonce="**", opaque=**');
    expect(out).to.include('WWW-Authenticate: Digest realm="d", nonce="**", algorithm=MD5');
    expect(out).to.include('Authentication-Info: nextnonce="**", qop=auth, rspauth="**", cnonce="**", nc=00000001');
    expect(out).to.include('Proxy-Authorization: Bearer ***********\r\n  *********\r\n');
    expect(out).to.include('inline:****|2^31;inline:****').and.include('a=key-mgmt:mikey ****');
    const plain = Buffer.from('BYE sip:a@b SIP/2.0\r\nCSeq: 2 BYE\r\nContent-Length: 0\r\n\r\n');
    expect(redactSipBytes(plain)).to.equal(plain);
    const bytes = Buffer.concat([Buffer.from(msg), Buffer.from([0xff, 0x00, 0x80])]);
    const redacted = redactSipBytes(bytes);
    expect(redacted).to.have.length(bytes.length);
    expect([...redacted.subarray(-3)], 'body bytes pass through as they are').to.deep.equal([0xff, 0x00, 0x80]);
  });
});
