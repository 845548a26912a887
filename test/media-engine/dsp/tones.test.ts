import { expect } from 'chai';
import { beep, dtmfTones, renderSource, ringback, silence, ToneSource } from '../../../media-engine/dsp/tones';
import { goertzelCoeff, goertzelPower, relativePower } from '../../../media-engine/dsp/goertzel';

function share(x: Int16Array, start: number, hz: number): number {
  let e = 0;
  for (let i = start; i < start + 160; i++) e += x[i] * x[i];
  return relativePower(goertzelPower(x, start, 160, goertzelCoeff(hz)), 160, e);
}
const rmsOf = (x: Int16Array, a: number, b: number) => {
  let e = 0;
  for (let i = a; i < b; i++) e += x[i] * x[i];
  return Math.sqrt(e / (b - a));
};

describe('media-engine/dsp tones', () => {
  it('beep: 1000 Hz for exactly 250 ms, then ends', () => {
    const x = renderSource(beep());
    expect(x.length).to.equal(2000 + 160 - (2000 % 160)); // 250 ms = 12.5 frames → 13 frames, last zero-padded
    expect(share(x, 800, 1000)).to.be.greaterThan(0.95);
    expect(rmsOf(x, 2000, x.length)).to.equal(0);
    expect(rmsOf(x, 0, 2000)).to.be.closeTo(8000 / Math.SQRT2, 100);
  });

  it('ringback (US): 440+480 Hz for 2 s, 4 s silence, repeating', () => {
    const src = ringback('us');
    const x = renderSource(src, 12000);
    expect(x.length).to.equal(12000 * 8);
    expect(share(x, 8000, 440) + share(x, 8000, 480)).to.be.greaterThan(0.6);
    expect(rmsOf(x, 16000, 48000)).to.equal(0);
    expect(rmsOf(x, 48000, 64000)).to.be.greaterThan(5000);
    expect(src.readFrame(new Int16Array(160))).to.equal(true); // never ends by itself
  });

  it('DTMF tones: right pair per digit, timing on/off', () => {
    const x = renderSource(dtmfTones('5#', { onMs: 100, offMs: 60 }));
    expect(x.length).to.equal(320 * 8);
    expect(share(x, 0, 770)).to.be.greaterThan(0.4);
    expect(share(x, 0, 1336)).to.be.greaterThan(0.4);
    expect(rmsOf(x, 800, 1280)).to.equal(0);
    expect(share(x, 1280, 941)).to.be.greaterThan(0.4);
    expect(share(x, 1280, 1477)).to.be.greaterThan(0.4);
    expect(() => dtmfTones('5x')).to.throw(/not a DTMF digit/);
    expect(() => dtmfTones('')).to.throw(/no digits/);
  });

  it('silence and custom cadences; a finished source returns false and leaves the frame alone', () => {
    expect(renderSource(silence(110)).length).to.equal(960);
    const src = new ToneSource({
      segments: [
        { freqs: [600], ms: 20 },
        { freqs: [], ms: 20 },
      ],
      repeat: 2,
    });
    const out = new Int16Array(160);
    let frames = 0;
    while (src.readFrame(out)) frames++;
    expect(frames).to.equal(4);
    out.fill(7);
    expect(src.readFrame(out)).to.equal(false);
    expect(out[0]).to.equal(7);
    expect(() => new ToneSource({ segments: [] })).to.throw();
  });

  it('is phase-continuous across frame boundaries (no clicks)', () => {
    const x = renderSource(beep({ freq: 440, ms: 200 }));
    let maxStep = 0;
    for (let i = 1; i < 1600; i++) maxStep = Math.max(maxStep, Math.abs(x[i] - x[i - 1]));
    expect(maxStep).to.be.at.most(Math.ceil((8000 * 2 * Math.PI * 440) / 8000) + 1);
  });
});
