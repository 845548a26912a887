// Wideband legs in the engine (issue #34): endpoints that negotiate G.722 or Opus between themselves
// over loopback UDP. RFC 4733 digits cross at the codec's clock (8000 for G.722, 48000 for Opus) with
// their duration intact; a prompt (8 kHz) played to a wideband leg arrives resampled, as the speech
// it was; a leg that changes codec by re-offer (G.722 -> PCMU) keeps working; a G.722 leg records a
// 16 kHz WAV that holds a 6 kHz tone its far end sent.
import dgram from 'node:dgram';
import path from 'node:path';
import { expect } from 'chai';
import { createCodec, Resampler } from '../../media-engine/codecs';
import { power, toneShare } from '../../testkit/media-engine/far-end';
import { type DtmfEvent, type Endpoint, type MediaServer } from '../../media-engine';
import type { AudioCodecName } from '../../media-engine';
import { bestCorrelation, readWav, sleep, useMediaServer } from '../../testkit/media-engine/support';

/** 16 kHz audio brought to 8 kHz (speexdsp, as the engine does) to compare with an 8 kHz reference. */
function to8k(x: Int16Array): Int16Array {
  const r = new Resampler(16000, 8000);
  const out = new Int16Array(x.length / 2 + 160);
  const n = r.process(x, out, x.length - (x.length % 320));
  r.close();
  return out.subarray(0, n);
}

describe('media-engine wideband legs (G.722, Opus) over loopback UDP', function () {
  this.timeout(30000);
  let ms: MediaServer;
  let dir: string;
  let speech: string;

  useMediaServer({ ports: 200, workers: 1, speech: 'Wide band legs carry speech and digits.' }, (f) => ({ ms, dir, speech } = f));

  /** A offers only `codec`, B answers it. */
  async function pair(codec: AudioCodecName): Promise<[Endpoint, Endpoint]> {
    const a = await ms.createEndpoint({ codecs: [codec] });
    const b = await ms.createEndpoint({ remoteSdp: a.local.sdp });
    await a.modify(b.local.sdp);
    expect(b.local.sdp).to.contain(codec === 'opus' ? 'opus/48000/2' : `${codec}/8000`);
    return [a, b];
  }

  for (const [codec, clock] of [
    ['G722', 8000],
    ['opus', 48000],
  ] as const) {
    it(`${codec}: RFC 4733 digits at ${clock} Hz arrive once each with their duration`, async () => {
      const [a, b] = await pair(codec);
      expect(b.local.sdp).to.contain(`telephone-event/${clock}`);
      const got: DtmfEvent[] = [];
      b.on('dtmf', (e: DtmfEvent) => got.push(e));
      await a.sendDtmf('19#', 120);
      await sleep(3 * 260 + 600);
      expect(got.map((e) => e.dtmf).join('')).to.equal('19#');
      expect(
        got.every((e) => e.source === 'rfc2833' && e.duration === 120),
        JSON.stringify(got),
      ).to.equal(true);
      await a.destroy();
      await b.destroy();
    });

    it(`${codec}: a prompt played on A is heard by B as the same speech (8 kHz prompt resampled to 16 kHz and back)`, async () => {
      const [a, b] = await pair(codec);
      const ref = readWav(speech).samples;
      const seconds = Math.ceil(ref.length / 8000 + 1);
      const rec = b.record(path.join(dir, `${codec}.wav`), { duration: seconds });
      await a.play(speech);
      const r = await rec;
      const wav = readWav(r.path);
      expect(wav.rate, 'a wideband leg records at 16 kHz').to.equal(16000);
      const { corr } = bestCorrelation(ref, to8k(wav.samples));
      // lossy codecs and resamplings: well correlated, not sample-exact
      expect(corr, `correlation through ${codec}`).to.be.greaterThan(0.7);
      await a.destroy();
      await b.destroy();
    });
  }

  it('a G.722 leg re-offered PCMU changes codec and keeps carrying audio', async () => {
    const a = await ms.createEndpoint({ codecs: ['G722'] });
    const b = await ms.createEndpoint({ remoteSdp: a.local.sdp });
    await a.modify(b.local.sdp);
    // B's far end is now another party offering PCMU only (a re-INVITE after a transfer); the old one
    // stops sending first, or B's symmetric RTP would latch back onto it
    await a.destroy();
    const a2 = await ms.createEndpoint({ codecs: ['PCMU'] });
    const reanswer = await b.modify(a2.local.sdp);
    expect(reanswer).to.contain('PCMU/8000');
    await a2.modify(reanswer);
    const ref = readWav(speech).samples;
    // room for a late start on a loaded machine: the best offset is searched for
    const rec = a2.record(path.join(dir, 'reoffer.wav'), { duration: Math.ceil(ref.length / 8000 + 3) });
    await b.play(speech);
    const { corr } = bestCorrelation(ref, readWav((await rec).path).samples);
    expect(corr).to.be.greaterThan(0.8);
    for (const e of [a2, b]) await e.destroy();
  });

  it('a G.722 leg records a 16 kHz WAV with the 6 kHz tone its far end sent', async () => {
    const sock = dgram.createSocket('udp4');
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
    const port = sock.address().port;
    const offer = ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${port} RTP/AVP 9`, 'a=rtpmap:9 G722/8000', 'a=sendrecv', ''].join('\r\n');
    const ep = await ms.createEndpoint({ remoteSdp: offer });
    const codec = createCodec('G722');
    try {
      const rec = ep.record(path.join(dir, 'g722.wav'), { duration: 2, separate: true });
      // 2.5 s of a 6 kHz tone, 20 ms G.722 packets (160 ticks of the 8000 clock each), paced at 20 ms
      const pcm = new Int16Array(320);
      const payload = new Uint8Array(160);
      for (let f = 0; f < 125; f++) {
        for (let i = 0; i < 320; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 6000 * (f * 320 + i)) / 16000));
        const n = codec.encode(pcm, payload);
        const pkt = Buffer.alloc(12 + n);
        pkt[0] = 0x80;
        pkt[1] = 9;
        pkt.writeUInt16BE(f, 2);
        pkt.writeUInt32BE(f * 160, 4);
        pkt.writeUInt32BE(0x1234, 8);
        pkt.set(payload.subarray(0, n), 12);
        sock.send(pkt, ep.local.port, '127.0.0.1');
        await sleep(20);
      }
      const r = await rec;
      const inFile = r.files.find((f) => f.direction === 'in')!;
      const wav = readWav(inFile.path);
      expect(wav.rate, "the recording keeps the leg's 16 kHz").to.equal(16000);
      const x = wav.samples;
      const last = x.subarray(x.length - 16000);
      expect(power(last), 'the recording holds sound').to.be.greaterThan(1e5);
      const share = toneShare(last, 6000, 16000);
      expect(share, 'the 6 kHz tone is in the recording').to.be.greaterThan(0.5);
    } finally {
      codec.close();
      sock.close();
      await ep.destroy();
    }
  });
});
