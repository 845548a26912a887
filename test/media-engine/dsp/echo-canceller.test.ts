// The echo canceller (media-engine/dsp/echo-canceller.ts, libspeexdsp's MDF filter in the native
// module) on espeak-ng speech: the far end is the agent's story, the near end its echo (a delayed,
// attenuated copy, as a speakerphone sends it back) plus the caller's own words at the end. After
// the filter has converged the echo is ≥ 15 dB down (ERLE) and the caller's words come out whole
// (correlation with what the caller said). Also its bad options and a closed state.
import { expect } from 'chai';
import { EchoCanceller } from '../../../media-engine';
import { speechSamples } from '../../../testkit/ai/echo-phone';

const STORY =
  'This is sentence number one of a very long story. This is sentence number two of a very long story. ' + 'This is sentence number three of a very long story. And this is the fourth one.';

describe('media-engine dsp: echo canceller', function () {
  this.timeout(60_000);
  let far: Int16Array;
  let caller: Int16Array;
  before(() => {
    far = speechSamples(STORY);
    caller = speechSamples('Stop. Wait, stop please.', { speed: 140, pitch: 70 });
  });

  /** near = far `delayMs` late × `gain` (+ the caller 0.5 s before the end when `withCaller`), through a canceller frame by frame. */
  function run(delayMs: number, gain: number, withCaller: boolean, tailMs = 400) {
    const n = far.length - (far.length % 160);
    const c0 = n - caller.length - 4000;
    const near = new Int16Array(n);
    for (let i = 0; i < n; i++) {
      const e = i >= delayMs * 8 ? far[i - delayMs * 8]! * gain : 0;
      const c = withCaller && i >= c0 && i < c0 + caller.length ? caller[i - c0]! : 0;
      near[i] = Math.max(-32768, Math.min(32767, Math.round(e + c)));
    }
    const out = new Int16Array(n);
    const aec = new EchoCanceller({ rate: 8000, tailMs });
    try {
      for (let i = 0; i < n; i += 160) aec.process(near.subarray(i, i + 160), far.subarray(i, i + 160), out.subarray(i, i + 160));
    } finally {
      aec.close();
    }
    return { near, out, c0 };
  }

  const energy = (x: Int16Array, a: number, b: number) => {
    let s = 0;
    for (let i = a; i < b; i++) s += x[i]! * x[i]!;
    return s;
  };

  const correlation = (x: Int16Array, y: Int16Array, a: number, b: number) => {
    let sxy = 0;
    let sxx = 0;
    let syy = 0;
    for (let i = a; i < b; i++) {
      sxy += x[i]! * y[i]!;
      sxx += x[i]! * x[i]!;
      syy += y[i]! * y[i]!;
    }
    return sxy / Math.sqrt(sxx * syy);
  };

  for (const [delay, gain] of [
    [150, 0.5],
    [300, 0.3],
    [50, 0.9],
  ] as const) {
    it(`echo ${delay} ms late at ${(20 * Math.log10(gain)).toFixed(0)} dB: ≥ 15 dB down after 6 s; the caller's words kept`, () => {
      const { near, out, c0 } = run(delay, gain, true);
      // converged: from 6 s into the agent's speech to the caller's first word (echo only)
      const erle = 10 * Math.log10(energy(near, 48000, c0) / energy(out, 48000, c0));
      expect(erle, 'ERLE, dB').to.be.at.least(15);
      // the caller's words come out as the canceller passes them with no echo at all (its DC filter
      // shifts the phase of the lowest tones a little, so that, not the raw samples, is the reference)
      const alone = run(delay, 0, true).out;
      const r = correlation(out, alone, c0, c0 + caller.length);
      expect(r, "correlation with the caller's words").to.be.at.least(0.9);
      // and at their level (not suppressed with the echo): within 3 dB
      expect(Math.abs(10 * Math.log10(energy(out, c0, c0 + caller.length) / energy(alone, c0, c0 + caller.length))), 'level change, dB').to.be.below(3);
    });
  }

  it('with no echo at all the caller passes at its level (nothing taken out, nothing made up)', () => {
    const { near, out, c0 } = run(150, 0, true);
    expect(correlation(out, near, c0, c0 + caller.length)).to.be.at.least(0.8);
    expect(Math.abs(10 * Math.log10(energy(out, c0, c0 + caller.length) / energy(near, c0, c0 + caller.length))), 'level change, dB').to.be.below(1);
  });

  it('with nothing sent, its output is one steady filter of what came (no frame spliced in as it came: the same speech half a frame later comes out the same, half a frame later)', () => {
    // the fault behind "the caller's first sentence, no greeting before it, got no answer": frames the
    // canceller's DC notch made louder went on as they came, the others notched, so the recogniser
    // heard a click at each switch (pocketsphinx then matched no phrase)
    const speech = speechSamples('What time is it.');
    const through = (shift: number) => {
      const n = 1600 + speech.length + 1600 - ((speech.length + 3200) % 160);
      const near = new Int16Array(n);
      near.set(speech, 800 + shift);
      const out = new Int16Array(n);
      const aec = new EchoCanceller({ rate: 8000, tailMs: 500 });
      try {
        const silent = new Int16Array(160);
        for (let i = 0; i < n; i += 160) aec.process(near.subarray(i, i + 160), silent, out.subarray(i, i + 160));
      } finally {
        aec.close();
      }
      return out;
    };
    const a = through(0);
    const b = through(80);
    let worst = 0;
    let diff = 0;
    for (let i = 0; i + 80 < a.length; i++) {
      const d = Math.abs(b[i + 80]! - a[i]!);
      worst = Math.max(worst, d);
      diff += d * d;
    }
    expect(10 * Math.log10(diff / energy(a, 0, a.length)), 'difference between the two, dB').to.be.below(-40);
    expect(worst, 'largest sample difference').to.be.at.most(4);
  });

  it('a tail shorter than the echo delay does not cancel it (the tail is what covers the delay)', () => {
    const { near, out, c0 } = run(300, 0.5, false, 200);
    expect(10 * Math.log10(energy(near, 48000, c0) / energy(out, 48000, c0))).to.be.below(6);
  });

  it('refuses bad options and frames, and a closed canceller', () => {
    expect(() => new EchoCanceller({ rate: 44100 })).to.throw(RangeError, /rate must be 8000 or 16000/);
    expect(() => new EchoCanceller({ rate: 8000, tailMs: 5000 })).to.throw(RangeError, /tailMs must be an integer from 20 to 1000/);
    expect(() => new EchoCanceller({ rate: 8000, residualDb: -3 })).to.throw(RangeError, /residualDb/);
    const aec = new EchoCanceller({ rate: 16000, residualDb: 20 });
    expect(() => aec.process(new Int16Array(160), new Int16Array(320))).to.throw(RangeError, /one frame/);
    aec.process(new Int16Array(320), new Int16Array(320));
    aec.close();
    expect(() => aec.process(new Int16Array(320), new Int16Array(320))).to.throw(/closed/);
  });
});
