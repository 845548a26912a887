import { expect } from 'chai';
import { createVad, EnergyVad, voicedSegments, type Vad } from '../../../media-engine/dsp/vad';
import { concat, espeak, forEachFrame, noise, silenceMs } from '../../../testkit/media-engine/audio';

function decisions(vad: Vad, s: Int16Array): boolean[] {
  const d: boolean[] = [];
  forEachFrame(s, (f) => d.push(vad.process(f)));
  return d;
}

describe('media-engine/dsp VAD', function () {
  this.timeout(30000);
  let speech: Int16Array;
  let speechMs: number;
  before(() => {
    speech = espeak('The quick brown fox jumps over the lazy dog near the river bank.');
    speechMs = speech.length / 8;
  });

  it('fvad (wasm) finds speech between 1 s of silence on each side', async () => {
    const vad = await createVad({ engine: 'fvad' });
    expect(vad.kind).to.equal('fvad');
    const segs = voicedSegments(decisions(vad, concat(silenceMs(1000), speech, silenceMs(1000))));
    vad.close();
    // Like the stack notes' figure (speech 1000–4427 ms found as [1040, 4200]): onset within a few
    // frames, offset no later than the end of the audio espeak produced.
    expect(segs.length).to.be.at.least(1);
    expect(segs[0][0]).to.be.within(1000, 1100);
    expect(segs[segs.length - 1][1]).to.be.within(1000 + speechMs - 800, 1000 + speechMs + 100);
  });

  it('fvad says silence for digital silence and for quiet noise', async () => {
    const vad = await createVad({ engine: 'fvad', mode: 3 });
    expect(decisions(vad, silenceMs(1000)).some(Boolean)).to.equal(false);
    expect(decisions(vad, noise(8000, 30)).filter(Boolean).length).to.be.at.most(10);
    vad.close();
    expect(() => vad.process(new Int16Array(160))).to.throw(/after close/);
  });

  it('several instances share the module and keep separate state', async () => {
    const a = await createVad();
    const b = await createVad();
    const da = decisions(a, concat(silenceMs(300), speech));
    const db = decisions(b, concat(silenceMs(300), speech));
    expect(da).to.deep.equal(db);
    a.close();
    b.close();
  });

  it('energy fallback finds the same speech region roughly', async () => {
    const vad = await createVad({ engine: 'energy' });
    expect(vad).to.be.instanceOf(EnergyVad);
    const segs = voicedSegments(decisions(vad, concat(silenceMs(1000), speech, silenceMs(1000))));
    expect(segs[0][0]).to.be.within(1000, 1200);
    expect(segs[segs.length - 1][1]).to.be.within(1000 + speechMs - 800, 1000 + speechMs + 200);
    expect(decisions(new EnergyVad(), noise(16000, 60)).some(Boolean)).to.equal(false);
  });

  it('rejects frames of the wrong size', async () => {
    const vad = await createVad();
    expect(() => vad.process(new Int16Array(100))).to.throw(RangeError);
    vad.close();
    expect(() => new EnergyVad().process(new Int16Array(10))).to.throw(RangeError);
  });
});
