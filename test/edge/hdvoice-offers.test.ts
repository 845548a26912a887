// HD voice offers (issue #34): a trunk (sipp) offers only G.722, only Opus, or only a codec we do not
// have (iLBC) to a virtual number whose flow answers and talks. The platform answers G.722 and Opus
// with 200 and that codec (Opus with the RFC 7587 fmtp), sends the flow's speech in it (decoded here
// with the engine's own codec: speech energy, not silence), and refuses iLBC with 488 and a Warning.
import { usePlatform } from '../../testkit/media-app/platform-hooks';
import dgram from 'node:dgram';
import { expect } from 'chai';
import { createCodec, type Codec } from '../../media-engine/codecs';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { repos } from '../../core/repos';
import { testDb } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { sipp, uacWaitsForBye, type Platform } from '../../testkit/media-app/harness';

/** RTP the platform sends: packets of payload type `pt`, decoded with `codec`, level per packet. */
class CodecSink {
  private sock = dgram.createSocket('udp4');
  port = 0;
  packets = 0;
  otherPt = 0;
  levels: number[] = [];
  private readonly pcm = new Int16Array(5760);

  constructor(
    private readonly pt: number,
    private readonly codec: Codec,
  ) {}

  async open(): Promise<this> {
    await new Promise<void>((r) => this.sock.bind(0, '127.0.0.1', r));
    this.port = this.sock.address().port;
    this.sock.on('message', (buf) => {
      if (buf.length < 12 || (buf[0]! & 0xc0) !== 0x80) return;
      if ((buf[1]! & 0x7f) !== this.pt) return void this.otherPt++;
      const payload = buf.subarray(12 + (buf[0]! & 0x0f) * 4);
      this.packets++;
      const n = this.codec.decode(payload, this.pcm);
      let sum = 0;
      for (let i = 0; i < n; i++) sum += Math.abs(this.pcm[i]!);
      this.levels.push(n ? sum / n : 0);
    });
    return this;
  }

  get voiced(): number {
    return this.levels.filter((l) => l > 300).length;
  }

  close(): void {
    this.sock.close();
    this.codec.close();
  }
}

/** The scenario of uacWaitsForBye with its PCMU offer replaced by `media` (m= line and attributes). */
function offering(ruri: string, port: number, media: string, opts: { expectStatus?: number } = {}): string {
  return uacWaitsForBye(ruri, '+15551230000', port, opts).replace(/m=audio \d+ RTP\/AVP 0 101\n[\s\S]*?a=sendrecv/, `${media.replace('PORT', String(port))}\na=sendrecv`);
}

/** The SDP body of the 200 OK sipp logged as received. */
function answerSdp(messages: string): string {
  const i = messages.indexOf('SIP/2.0 200 OK');
  expect(i, 'a 200 OK was received').to.be.greaterThan(-1);
  const body = messages.slice(i).split(/\r?\n\r?\n/)[1] ?? '';
  return body;
}

/** The Warning header of the 488 sipp logged as received. */
function warningOf488(messages: string): string {
  const reply = messages.slice(messages.indexOf('SIP/2.0 488'));
  return /^Warning:\s*(.*)$/im.exec(reply.split(/\r?\n\r?\n/)[0] ?? '')?.[1] ?? '';
}

describe('edge: G.722-only and Opus-only offers are answered in that codec; others get 488 + Warning', function () {
  this.timeout(120_000);
  let p: Platform;
  let n = 0;

  usePlatform({ SIP_DIGEST_ALGORITHMS: 'MD5' }, (x) => (p = x));

  /** A trunk known by 127.0.0.1 and a number whose flow answers and talks; returns the request URI. */
  async function talkingNumber(): Promise<string> {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `hd${Date.now()}${n}@example.test`, status: 'active', name: 'hd' })).id;
    await trunksRepo(db).create(cid, `hd${Date.now()}${n}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'talk', option: { text: 'Hello. This is a wide band test of the platform.', language: 'en-US' } }, { type: 'hangup' }]),
    } as never);
    const number = `+89910000${String(100 + n++)}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    return `${number}@127.0.0.1:${p.sipPort}`;
  }

  it('a G.722-only offer gets 200 with G722/8000 and the flow speaks G.722', async () => {
    const ruri = await talkingNumber();
    const sink = await new CodecSink(9, createCodec('G722')).open();
    try {
      const r = await sipp(
        offering(ruri, sink.port, 'm=audio PORT RTP/AVP 9 101\na=rtpmap:9 G722/8000\na=rtpmap:101 telephone-event/8000\na=fmtp:101 0-15'),
        [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'],
        { killAfterMs: 40_000 },
      ).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      const sdp = answerSdp(r.messages);
      expect(sdp).to.match(/m=audio \d+ RTP\/AVP 9 101\r?\n/);
      expect(sdp).to.match(/a=rtpmap:9 G722\/8000/);
      expect(sdp).to.match(/a=rtpmap:101 telephone-event\/8000/);
      expect(sink.otherPt, 'packets of another payload type').to.equal(0);
      expect(sink.packets).to.be.greaterThan(50);
      expect(sink.voiced, `levels ${sink.levels.slice(0, 60).map(Math.round).join(',')}`).to.be.greaterThan(25);
    } finally {
      sink.close();
    }
  });

  it('an Opus-only offer gets 200 with opus/48000/2, RFC 7587 fmtp, telephone-event/48000, and the flow speaks Opus', async () => {
    const ruri = await talkingNumber();
    const sink = await new CodecSink(107, createCodec('opus')).open();
    try {
      const media = 'm=audio PORT RTP/AVP 107 108 101\na=rtpmap:107 opus/48000/2\na=fmtp:107 useinbandfec=1;stereo=0\na=rtpmap:108 telephone-event/48000\na=rtpmap:101 telephone-event/8000';
      const r = await sipp(offering(ruri, sink.port, media), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 40_000 }).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      const sdp = answerSdp(r.messages);
      expect(sdp).to.match(/m=audio \d+ RTP\/AVP 107 108\r?\n/);
      expect(sdp).to.match(/a=rtpmap:107 opus\/48000\/2/);
      const fmtp = /a=fmtp:107 (.*)/.exec(sdp)?.[1] ?? '';
      expect(fmtp)
        .to.match(/useinbandfec=1/)
        .and.to.match(/stereo=0/)
        .and.to.match(/maxplaybackrate=16000/);
      expect(sdp).to.match(/a=rtpmap:108 telephone-event\/48000/);
      expect(sink.otherPt, 'packets of another payload type').to.equal(0);
      expect(sink.packets).to.be.greaterThan(50);
      expect(sink.voiced, `levels ${sink.levels.slice(0, 60).map(Math.round).join(',')}`).to.be.greaterThan(25);
    } finally {
      sink.close();
    }
  });

  it('an iLBC-only offer gets 488 with a Warning naming the codecs we take, and no call', async () => {
    const ruri = await talkingNumber();
    const r = await sipp(offering(ruri, await freePort(), 'm=audio PORT RTP/AVP 97\na=rtpmap:97 iLBC/8000\na=fmtp:97 mode=30', { expectStatus: 488 }), [
      `127.0.0.1:${p.sipPort}`,
      '-i',
      '127.0.0.1',
      '-m',
      '1',
    ]).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(warningOf488(r.messages)).to.match(/^305 \S+ "Incompatible media format: we take PCMU, PCMA, G722, opus"$/);
    const db = await testDb();
    const calls = await db('calls').whereRaw(`destination->>'target' = ?`, [ruri.split('@')[0]]);
    expect(calls).to.have.length(0);
  });

  it('an SDES offer with no rtpengine to take it gets 488 with Warning 302 (transport), not a codec complaint', async () => {
    const ruri = await talkingNumber();
    const media = 'm=audio PORT RTP/SAVP 0\na=rtpmap:0 PCMU/8000\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz';
    const r = await sipp(offering(ruri, await freePort(), media, { expectStatus: 488 }), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1']).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(warningOf488(r.messages)).to.equal('302 openvoice "Incompatible transport protocol"');
  });
});
