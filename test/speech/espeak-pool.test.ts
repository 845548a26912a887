// The warm espeak-ng pool (media-engine/tts/espeak-pool.ts) with the real espeak-ng: a text goes to
// a process started ahead of time and gives the same audio as a freshly started one; failures
// (no text, a voice espeak-ng lacks) are errors, not hangs; a closed pool still speaks (cold).
import { expect } from 'chai';
import { EspeakPool } from '../../media-engine/tts/espeak-pool';
import { espeakStream } from '../../media-engine/tts/espeak-stream';
import { TtsError } from '../../media-engine/tts/provider';

async function collect(speak: (on: (s: Int16Array) => void) => Promise<number>): Promise<{ samples: number; chunks: number[]; total: number }> {
  const chunks: number[] = [];
  const total = await speak((s) => chunks.push(s.length));
  return { samples: chunks.reduce((a, b) => a + b, 0), chunks, total };
}

describe('EspeakPool: warm espeak-ng processes', function () {
  this.timeout(20_000);
  let pool: EspeakPool;
  beforeEach(() => {
    pool = new EspeakPool({ idleMs: 5000 });
  });
  afterEach(() => pool.close());

  it('speaks on a process started ahead of time, the same audio as a cold start, in 20 ms frames', async () => {
    const o = { voice: 'en-us' };
    const text = 'Your order has been shipped.';
    pool.prewarm(o);
    await new Promise((r) => setTimeout(r, 300));
    const warm = await collect((on) => pool.speak(text, o, on));
    expect(pool.stats).to.deep.equal({ warm: 1, cold: 0 });
    const cold = await collect((on) => espeakStream(text, o, on));
    expect(warm.total).to.equal(warm.samples);
    expect(warm.samples).to.equal(cold.samples);
    expect(warm.samples / 8000).to.be.within(1, 3);
    // every chunk but the last is whole 20 ms frames
    for (const n of warm.chunks.slice(0, -1)) expect(n % 160).to.equal(0);
    // the next text finds the replacement already started
    await collect((on) => pool.speak('And again.', o, on));
    expect(pool.stats.warm).to.equal(2);
    // another voice has no spare yet: cold, then warm
    await collect((on) => pool.speak('Hallo.', { voice: 'de' }, on));
    await collect((on) => pool.speak('Hallo noch mal.', { voice: 'de' }, on));
    expect(pool.stats).to.deep.equal({ warm: 3, cold: 1 });
  });

  it('refuses blank text and fails (not hangs) on a voice espeak-ng lacks; a closed pool starts processes as needed', async () => {
    let err: unknown;
    try {
      await pool.speak('   ', { voice: 'en-us' }, () => undefined);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(TtsError).and.to.have.property('code', 'EMPTY_TEXT');
    pool.prewarm({ voice: 'xx-nonexistent' });
    await new Promise((r) => setTimeout(r, 300));
    err = undefined;
    try {
      await pool.speak('Hello.', { voice: 'xx-nonexistent' }, () => undefined);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(TtsError).and.to.have.property('code', 'SYNTHESIS_FAILED');
    pool.close();
    const r = await collect((on) => pool.speak('Still speaking.', { voice: 'en-us' }, on));
    expect(r.samples).to.be.above(4000);
  });
});
