// The echo guard when its two streams come bunched (docs/ai.md "Turn-taking"): on a loaded machine the
// agent's frames ('out' fork, at the tick) and the caller's ('in' fork, as packets are read) reach
// media-app a few frames early or late against each other, though what they hold stays in step (the
// echo is as far behind the agent's voice as ever). A speakerphone's echo must stay silenced however
// the frames came, and a caller talking over it still passes.
import { expect } from 'chai';
import { EchoGuard } from '../../media-app/ai/echo-guard';
import { speechSamples } from '../../testkit/ai/echo-phone';
import { seededRandom } from '../../testkit/seeded';

const FRAME = 160;
const level = (f: Int16Array) => f.reduce((a, v) => a + Math.abs(v), 0) / f.length;

describe('echo guard: frames that arrive bunched', function () {
  this.timeout(60_000);
  let far: Int16Array;
  let caller: Int16Array;
  before(() => {
    far = speechSamples('Welcome to the corner bakery, where we bake bread, rolls and cakes every morning before sunrise for the whole town.');
    caller = speechSamples('Stop. Wait, stop please.', { speed: 140, pitch: 70 });
  });

  /**
   * The agent's frames and the caller's (the echo `delayMs` late at `gain`, the caller from `callerAtMs`)
   * through the guard, each stream now and then held back `maxSlip` frames and then let through at once
   * (`slip`: false, in step); the loud frames passed on, within the caller's speech and elsewhere.
   */
  function run(o: { delayMs: number; gain: number; callerAtMs: number | null; slip: boolean; seed: number; maxSlip?: number }) {
    const rnd = seededRandom(o.seed);
    const n = far.length + 8000;
    const frames = Math.floor(n / FRAME);
    const near = new Float64Array(n);
    const d = o.delayMs * 8;
    for (let i = 0; i < far.length && i + d < n; i++) near[i + d] = far[i]! * o.gain;
    const c0 = o.callerAtMs === null ? -1 : o.callerAtMs * 8;
    if (c0 >= 0) for (let i = 0; i < caller.length && c0 + i < n; i++) near[c0 + i]! += caller[i]!;
    // when each frame reaches the guard, in frame slots: in order within its stream, now and then late
    const arrivals = () => {
      const at: number[] = [];
      let hold = 0;
      for (let i = 0; i < frames; i++) {
        if (o.slip && hold === 0 && rnd() < 0.04) hold = 1 + Math.floor(rnd() * (o.maxSlip ?? 3));
        at.push(Math.max(at[i - 1] ?? 0, i + hold));
        if (hold > 0 && at[i] === i + hold && rnd() < 0.5) hold--;
      }
      return at;
    };
    const farAt = arrivals();
    const nearAt = arrivals();
    const events: { at: number; kind: 0 | 1; i: number }[] = [];
    for (let i = 0; i < frames; i++) events.push({ at: farAt[i]!, kind: 0, i }, { at: nearAt[i]!, kind: 1, i });
    // within a slot each stream's frames in order, the agent's before or after the caller's
    const nearFirst = Array.from({ length: frames + 8 }, () => o.slip && rnd() < 0.5);
    events.sort((a, b) => a.at - b.at || (a.kind === b.kind ? a.i - b.i : (a.kind - b.kind) * (nearFirst[a.at] ? -1 : 1)));
    const g = new EchoGuard(8000);
    let out = 0;
    let passedInCaller = 0;
    let passedElsewhere = 0;
    // what the guard passes on, from near20 or (frames that waited for the agent's) far20, in order
    const passOn = (xs: Int16Array[]) => {
      for (const x of xs) {
        const t = out * FRAME;
        if (level(x) > 300) {
          if (c0 >= 0 && t >= c0 && t < c0 + caller.length) passedInCaller++;
          else passedElsewhere++;
        }
        out++;
      }
    };
    for (const e of events) {
      const from = e.i * FRAME;
      if (e.kind === 0) {
        const f = new Int16Array(FRAME);
        f.set(far.subarray(Math.min(from, far.length), Math.min(from + FRAME, far.length)));
        passOn(g.far20(f));
      } else passOn(g.near20(Int16Array.from(near.subarray(from, from + FRAME), (v) => Math.max(-32768, Math.min(32767, v)))));
    }
    // nothing is lost: every frame comes out, in order (at most the frames held at the end are still in it)
    expect(out, 'frames passed on').to.be.within(frames - 25, frames);
    let callerFrames = 0;
    for (let i = 0; i + FRAME <= caller.length; i += FRAME) if (level(caller.subarray(i, i + FRAME)) > 300) callerFrames++;
    return { passedInCaller, passedElsewhere, callerFrames, path: g.echoPath };
  }

  for (const [delay, gain] of [
    [60, 0.3],
    [60, 0.1],
    [150, 0.5],
  ] as const)
    it(`echo ${delay} ms late at ${(20 * Math.log10(gain)).toFixed(0)} dB, frames bunched: silenced, as when they come in step`, () => {
      const steady = run({ delayMs: delay, gain, callerAtMs: null, slip: false, seed: 1 });
      expect(steady.path, 'an echo path in step').to.not.equal(null);
      expect(steady.passedElsewhere, 'echo frames passed on in step').to.be.at.most(3);
      for (const seed of [1, 2, 3, 4, 5]) {
        const bunched = run({ delayMs: delay, gain, callerAtMs: null, slip: true, seed });
        expect(bunched.path, `an echo path (seed ${seed})`).to.not.equal(null);
        expect(bunched.path!.lagMs, `the lag (seed ${seed})`).to.be.within(delay - 20, delay + 50);
        expect(bunched.passedElsewhere, `echo frames passed on (seed ${seed})`).to.be.at.most(3);
      }
    });

  it('a caller talking over the echo, frames bunched, is passed on', () => {
    for (const seed of [1, 2, 3]) {
      const both = run({ delayMs: 60, gain: 0.3, callerAtMs: 3000, slip: true, seed });
      expect(both.passedInCaller, `caller frames passed on (seed ${seed})`).to.be.at.least(both.callerFrames * 0.7);
    }
  });
});
