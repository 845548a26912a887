// Wideband legs in the engine (issue #34): endpoints that negotiate G.722 or Opus between themselves
// over loopback UDP. RFC 4733 digits cross at the codec's clock (8000 for G.722, 48000 for Opus) with
// their duration intact; a prompt (8 kHz) played to a wideband leg arrives resampled, as the speech
// it was; a leg that changes codec by re-offer (G.722 -> PCMU) keeps working.
import path from 'node:path';
import { expect } from 'chai';
import { type DtmfEvent, type Endpoint, type MediaServer } from '../../media-engine';
import type { AudioCodecName } from '../../media-engine';
import { bestCorrelation, readWav, sleep, useMediaServer } from './support';

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

  for (const [codec, clock] of [['G722', 8000], ['opus', 48000]] as const) {
    it(`${codec}: RFC 4733 digits at ${clock} Hz arrive once each with their duration`, async () => {
      const [a, b] = await pair(codec);
      expect(b.local.sdp).to.contain(`telephone-event/${clock}`);
      const got: DtmfEvent[] = [];
      b.on('dtmf', (e: DtmfEvent) => got.push(e));
      await a.sendDtmf('19#', 120);
      await sleep(3 * 260 + 600);
      expect(got.map((e) => e.dtmf).join('')).to.equal('19#');
      expect(got.every((e) => e.source === 'rfc2833' && e.duration === 120), JSON.stringify(got)).to.equal(true);
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
      const { corr } = bestCorrelation(ref, readWav(r.path).samples);
      // lossy codecs and two resamplings: well correlated, not sample-exact
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
    const rec = a2.record(path.join(dir, 'reoffer.wav'), { duration: Math.ceil(ref.length / 8000 + 1) });
    await b.play(speech);
    const { corr } = bestCorrelation(ref, readWav((await rec).path).samples);
    expect(corr).to.be.greaterThan(0.8);
    for (const e of [a2, b]) await e.destroy();
  });
});
