import { expect } from 'chai';
import { BeepDetector, type BeepDetection } from '../../../media-engine/dsp/beep-detector';
import { beep, renderSource, ringback } from '../../../media-engine/dsp/tones';
import { concat, espeak, forEachFrame, mixInto, noise, silenceMs, soxSynth } from '../../../testkit/media-engine/audio';

function detect(s: Int16Array, det = new BeepDetector()): BeepDetection[] {
  const out: BeepDetection[] = [];
  forEachFrame(s, (f) => {
    const b = det.process(f);
    if (b) out.push(b);
  });
  return out;
}

describe('media-engine/dsp beep detector', function () {
  this.timeout(30000);

  for (const hz of [400, 440, 850, 1000, 1400, 1900]) {
    it(`finds a ${hz} Hz, 300 ms sox beep once, at its start`, () => {
      const s = concat(silenceMs(1010), soxSynth(['0.3', 'sine', String(hz)], ['vol', '0.3']), silenceMs(500));
      const got = detect(s);
      expect(got).to.have.length(1);
      expect(got[0].offsetMs).to.be.within(1000, 1040);
      expect(got[0].frequency).to.be.closeTo(hz, 5);
    });
  }

  it('finds a beep in noise and reports two separate beeps separately', () => {
    const b = soxSynth(['0.25', 'sine', '1000'], ['vol', '0.3']);
    const s = concat(silenceMs(400), b, silenceMs(400), b, silenceMs(200));
    expect(detect(mixInto(s, noise(s.length, 400)))).to.have.length(2);
  });

  it('ignores a beep shorter than the minimum (100 ms) and tones outside 400–2000 Hz', () => {
    expect(detect(soxSynth(['0.1', 'sine', '1000'], ['vol', '0.3']))).to.deep.equal([]);
    expect(detect(soxSynth(['0.5', 'sine', '300'], ['vol', '0.3']))).to.deep.equal([]);
    expect(detect(soxSynth(['0.5', 'sine', '2600'], ['vol', '0.3']))).to.deep.equal([]);
  });

  it('rejects ringback (US 440+480, UK 400+450), sweeps and chords', () => {
    expect(detect(renderSource(ringback('us'), 12000))).to.deep.equal([]);
    expect(detect(renderSource(ringback('uk'), 6000))).to.deep.equal([]);
    expect(detect(soxSynth(['1', 'sine', '500-1500'], ['vol', '0.3']))).to.deep.equal([]);
    expect(detect(soxSynth(['2', 'pluck', 'C4', 'pluck', 'E4', 'pluck', 'G4'], ['vol', '0.5']))).to.deep.equal([]);
  });

  it('rejects speech', () => {
    const text = 'Hi, you have reached the voicemail of Alex. Beep boop, la la la, oooooh, eeeeeh, mmmmmm. Please leave a message.';
    for (const v of ['en-us', 'en-us+f3', 'en-gb']) expect(detect(espeak(text, v)), v).to.deep.equal([]);
  });

  it('finds our own generated beep (round trip) with custom limits', () => {
    const got = detect(concat(silenceMs(200), renderSource(beep({ freq: 1500, ms: 400 }))), new BeepDetector({ minMs: 300 }));
    expect(got).to.have.length(1);
    expect(got[0].durationMs).to.be.at.least(300);
    expect(got[0].offsetMs).to.equal(200);
  });
});
