// The resampler between 8, 16 and 48 kHz (libspeexdsp's, in the native codec module): levels kept in
// the pass band, what the lower rate cannot carry filtered out (no aliasing), no images when going up
// (which sample repetition would leave), 20 ms in = 20 ms out, and frames joining without a seam.
import { expect } from 'chai';
import { Resampler } from '../../../media-engine/codecs';
import { rmsOf, tone, toneDb } from './support';

/** x converted frame by frame (20 ms frames), as a leg does it. */
function convert(x: Int16Array, from: number, to: number): Int16Array {
  const r = new Resampler(from, to);
  const n = from / 50;
  const m = to / 50;
  const out = new Int16Array((x.length / n) * m);
  const frame = new Int16Array(m);
  try {
    for (let k = 0; k * n < x.length; k++) {
      expect(r.process(x.subarray(k * n, (k + 1) * n), frame)).to.equal(m);
      out.set(frame, k * m);
    }
  } finally {
    r.close();
  }
  return out;
}

describe('media-engine codecs: resampler', function () {
  this.timeout(30_000);

  it('a 6 kHz tone through 16k → 48k → 16k keeps its level within 1 dB', () => {
    const x = tone(16000, 6000, 16000);
    const back = convert(convert(x, 16000, 48000), 48000, 16000);
    const a = toneDb(x, 16000, 6000, 4000, 15000);
    const b = toneDb(back, 16000, 6000, 4000, 15000);
    expect(Math.abs(a - b)).to.be.below(1);
  });

  it('16k → 8k removes a 6 kHz tone (> 40 dB down) and keeps a 1 kHz one', () => {
    const x = tone(16000, 6000, 16000);
    const y = convert(x, 16000, 8000);
    expect(toneDb(x, 16000, 6000, 4000, 15000) - 20 * Math.log10(rmsOf(y, 2000, 7500) * Math.SQRT2 + 1e-6)).to.be.above(40);
    const t = tone(16000, 1000, 16000);
    expect(Math.abs(toneDb(convert(t, 16000, 8000), 8000, 1000, 2000, 7500) - toneDb(t, 16000, 1000, 4000, 15000))).to.be.below(0.5);
  });

  for (const from of [16000, 48000]) {
    it(`${from / 1000}k → 8k: a 7 kHz tone does not alias into the pass band (no 1 kHz, > 40 dB down)`, () => {
      const x = tone(from, 7000, from);
      const y = convert(x, from, 8000);
      const input = toneDb(x, from, 7000, from / 4, (from * 15) / 16);
      expect(input - toneDb(y, 8000, 1000, 2000, 7500)).to.be.above(40);
      expect(input - 20 * Math.log10(rmsOf(y, 2000, 7500) * Math.SQRT2 + 1e-6)).to.be.above(40);
    });
  }

  it('8k → 16k and 16k → 48k add no images (sample repetition would put 1 kHz at 7 kHz and 15 kHz)', () => {
    const x = tone(8000, 1000, 8000);
    const up = convert(x, 8000, 16000);
    const level = toneDb(x, 8000, 1000, 2000, 7500);
    expect(Math.abs(toneDb(up, 16000, 1000, 4000, 15000) - level)).to.be.below(0.5);
    expect(level - toneDb(up, 16000, 7000, 4000, 15000)).to.be.above(40);
    const up3 = convert(tone(16000, 1000, 16000), 16000, 48000);
    expect(level - toneDb(up3, 48000, 15000, 12000, 45000)).to.be.above(40);
    expect(level - toneDb(up3, 48000, 17000, 12000, 45000)).to.be.above(40);
    // the control: repeating samples does leave the image this test looks for
    const repeated = new Int16Array(16000);
    for (let i = 0; i < 16000; i++) repeated[i] = x[i >> 1];
    expect(level - toneDb(repeated, 16000, 7000, 4000, 15000)).to.be.below(40);
  });

  it('frame by frame equals all at once (the filter state carries over between frames)', () => {
    const x = tone(16000, 440, 16000, 9000);
    const framed = convert(x, 16000, 48000);
    const whole = new Resampler(16000, 48000);
    const out = new Int16Array(48000);
    expect(whole.process(x, out)).to.equal(48000);
    whole.close();
    expect(Buffer.from(framed.buffer).equals(Buffer.from(out.buffer))).to.equal(true);
  });

  it('reports its delay, and a 20 ms frame is 20 ms out for every pair of 8, 16 and 48 kHz', () => {
    for (const a of [8000, 16000, 48000]) {
      for (const b of [8000, 16000, 48000]) {
        if (a === b) continue;
        const r = new Resampler(a, b);
        expect(r.latencySamples).to.be.within(1, a / 100);
        expect(r.outputLength(a / 50)).to.equal(b / 50);
        const out = new Int16Array(b / 50);
        for (let k = 0; k < 5; k++) expect(r.process(new Int16Array(a / 50), out)).to.equal(b / 50);
        r.close();
      }
    }
  });

  it('refuses bad arguments with clear errors and writes nothing past `out`', () => {
    expect(() => new Resampler(16000, 8000, { quality: 11 })).to.throw(RangeError, /quality must be an integer from 0 to 10/);
    expect(() => new Resampler(0, 8000)).to.throw(RangeError, /inRate/);
    expect(() => new Resampler(16000, 1.5)).to.throw(RangeError, /outRate/);
    const r = new Resampler(16000, 48000);
    const backing = new Int16Array(960 + 8).fill(0x5555);
    const short = backing.subarray(0, 900);
    expect(() => r.process(tone(16000, 1000, 320), short)).to.throw(RangeError, /out is too short/);
    expect(Array.from(backing.subarray(900))).to.deep.equal(new Array(68).fill(0x5555));
    expect(() => r.process(tone(16000, 1000, 320), new Int16Array(960), 321)).to.throw(RangeError, /more than the input/);
    expect(() => r.process(new Float32Array(320) as unknown as Int16Array, new Int16Array(960))).to.throw(TypeError, /input must be an Int16Array/);
    r.close();
    r.close();
    expect(() => r.process(new Int16Array(320), new Int16Array(960))).to.throw(/closed/);
  });
});
