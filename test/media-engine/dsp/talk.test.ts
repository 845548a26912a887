// The conference talk detector (media-engine/dsp/talk.ts): a level with hysteresis, per member.
import { expect } from 'chai';
import { LOUD_FRAMES, QUIET_FRAMES, START_DBFS, STOP_DBFS, TalkDetector } from '../../../media-engine/dsp/talk';

/** A 20 ms frame of a 700 Hz tone whose RMS is `dbfs`. */
function at(dbfs: number): Int16Array {
  const amp = 32768 * 10 ** (dbfs / 20) * Math.SQRT2;
  return Int16Array.from({ length: 160 }, (_, i) => Math.round(amp * Math.sin((2 * Math.PI * 700 * i) / 8000)));
}

/** The changes pushing `frames` gives, with the frame index of each. */
const run = (d: TalkDetector, frames: (Int16Array | null)[]) => frames.map((f, i) => [i, d.push(f)] as const).filter(([, e]) => e !== null);

describe('media-engine TalkDetector (speaker events)', () => {
  it('starts after LOUD_FRAMES loud frames, stops after QUIET_FRAMES quiet ones', () => {
    const d = new TalkDetector();
    const frames = [...Array<Int16Array>(10).fill(at(-20)), ...Array<null>(40).fill(null)];
    expect(run(d, frames)).to.deep.equal([
      [LOUD_FRAMES - 1, 'start'],
      [10 + QUIET_FRAMES - 1, 'stop'],
    ]);
  });

  it('a click shorter than LOUD_FRAMES and a noise floor below START_DBFS start nothing', () => {
    const d = new TalkDetector();
    const click = Array<Int16Array>(LOUD_FRAMES - 1).fill(at(-10));
    expect(run(d, [...click, null, ...click, ...Array<Int16Array>(100).fill(at(START_DBFS - 2))])).to.deep.equal([]);
  });

  it('hysteresis: a level between the thresholds keeps talking, pauses under QUIET_FRAMES do not stop it', () => {
    const d = new TalkDetector();
    const between = at((START_DBFS + STOP_DBFS) / 2);
    const pause = Array<null>(QUIET_FRAMES - 1).fill(null);
    const frames = [...Array<Int16Array>(LOUD_FRAMES).fill(at(-20)), ...Array<Int16Array>(100).fill(between), ...pause, at(-20), ...pause, between];
    expect(run(d, frames).map(([, e]) => e)).to.deep.equal(['start']);
    expect(d.talking).to.equal(true);
    // while quiet, the in-between level does not start it either
    const q = new TalkDetector();
    expect(run(q, Array<Int16Array>(100).fill(between))).to.deep.equal([]);
  });
});
