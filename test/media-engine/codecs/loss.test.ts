// Lost packets: each codec conceals a lost frame with sound, not a gap (G.711: plc.ts; G.722: spandsp's
// PLC; Opus: its own PLC), and Opus's in-band FEC rebuilds lost frames from the next packet: with 5 %
// loss no gap is longer than one frame, where concealment alone leaves longer ones.
import { expect } from 'chai';
import { type Codec, type CodecName, createCodec } from '../../../media-engine/codecs';
import { alignedSnr, longestGapMs, lossPattern, rmsOf, roundTrip, speechAt, vowel } from './support';

/** SNR over the given frames only (at the codec's delay `lag`), dB. */
function snrOver(ref: Int16Array, got: Int16Array, frames: Iterable<number>, N: number, lag: number): number {
  let sig = 0;
  let err = 0;
  for (const k of frames) {
    for (let i = k * N; i < (k + 1) * N && i + lag < got.length; i++) {
      sig += ref[i] * ref[i];
      err += (ref[i] - got[i + lag]) ** 2;
    }
  }
  return 10 * Math.log10(sig / Math.max(err, 1));
}

describe('media-engine codecs: lost packets', function () {
  this.timeout(60_000);
  const open: Codec[] = [];
  const make = (name: CodecName): Codec => {
    const c = createCodec(name);
    open.push(c);
    return c;
  };
  after(() => open.forEach((c) => c.close()));

  // concealed frame at least this close to the lost signal (silence would be 0 dB)
  const FLOOR: Record<CodecName, number> = { PCMU: 6, PCMA: 6, G722: 3, opus: 1 };

  for (const name of ['PCMU', 'PCMA', 'G722', 'opus'] as const) {
    it(`${name}: one lost frame of a voiced sound is concealed without a gap`, () => {
      const probe = make(name);
      const r = probe.sampleRate;
      const N = probe.frameSamples;
      const x = vowel(r, r);
      const { lag } = alignedSnr(x, roundTrip(probe, x), r / 100, r / 10);
      const LOST = 25;
      const got = roundTrip(make(name), x, new Set([LOST]));
      const ref = rmsOf(x, LOST * N, (LOST + 1) * N);
      // every 5 ms of the lost frame carries sound
      for (let i = LOST * N; i < (LOST + 1) * N; i += N / 4) expect(rmsOf(got, i + lag, i + lag + N / 4), `5 ms at ${i}`).to.be.above(ref / 10);
      expect(longestGapMs(x, got, r, lag)).to.equal(0);
      expect(snrOver(x, got, [LOST], N, lag)).to.be.above(FLOOR[name]);
    });

    it(`${name}: conceal() before any packet gives a frame of silence, not an error`, () => {
      const c = make(name);
      const out = new Int16Array(c.frameSamples).fill(1234);
      expect(c.conceal(out)).to.equal(c.frameSamples);
      expect(rmsOf(out)).to.be.below(50);
    });
  }

  describe('Opus in-band FEC at 5 % loss', () => {
    const R = 16000;
    const N = 320;
    const speech = speechAt(R);
    const frames = Math.floor(speech.length / N);
    let lag = 0;
    before(() => {
      lag = alignedSnr(speech, roundTrip(make('opus'), speech), R / 100, R / 10).lag;
    });

    for (const seed of [7, 11, 3]) {
      it(`loss pattern ${seed}: no gap longer than one frame, and FEC beats concealment on the lost frames`, () => {
        const lost = lossPattern(frames, 5, seed);
        expect(lost.size / frames).to.be.within(0.03, 0.09);
        const withFec = roundTrip(make('opus'), speech, lost, true);
        const plcOnly = roundTrip(make('opus'), speech, lost, false);
        expect(longestGapMs(speech, withFec, R, lag)).to.be.at.most(20);
        const inner = [...lost].filter((k) => k < frames - 1);
        expect(snrOver(speech, withFec, inner, N, lag)).to.be.above(snrOver(speech, plcOnly, inner, N, lag) + 2);
      });
    }

    it('the gap measure does see gaps: concealment alone leaves one longer than a frame, silence more', () => {
      const lost = lossPattern(frames, 5, 7);
      const plcOnly = roundTrip(make('opus'), speech, lost, false);
      expect(longestGapMs(speech, plcOnly, R, lag)).to.be.above(20);
      const zeroed = roundTrip(make('opus'), speech);
      for (const k of lost) zeroed.fill(0, k * N + lag, Math.min(zeroed.length, (k + 1) * N + lag));
      expect(longestGapMs(speech, zeroed, R, lag)).to.be.above(20);
    });

    it('without useinbandfec the next packet carries nothing to rebuild from (recover = concealment)', () => {
      const lost = lossPattern(frames, 5, 7);
      const noFec = createCodec('opus', { useInbandFec: false });
      open.push(noFec);
      expect(noFec.hasFec).to.equal(false);
      const a = roundTrip(noFec, speech, lost, true);
      const inner = [...lost].filter((k) => k < frames - 1);
      const fec = roundTrip(make('opus'), speech, lost, true);
      expect(snrOver(speech, fec, inner, N, lag)).to.be.above(snrOver(speech, a, inner, N, lag) + 2);
    });
  });
});
