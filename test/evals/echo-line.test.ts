// The echo background's delay line (evals/background.ts EchoLine) on a virtual 20 ms clock: heard packets
// come steadily, then stop (a gap), then in a burst, then jittered (two at once every other frame). Each
// packet is marked by its value, so each sent frame says which packet it echoes and how many frames after
// it was heard. The echo is never later than delay_ms, and back at exactly delay_ms once packets are
// steady again: a burst does not lengthen the line for good.
import { expect } from 'chai';
import { EchoLine } from '../../evals/background';

const FRAME = 160;

describe('evals background echo: the delay line stays at delay_ms through bursts and gaps', () => {
  for (const delayMs of [60, 200]) {
    it(`delay_ms ${delayMs}: never later, and exactly that once packets are steady again`, () => {
      const delayFrames = delayMs / 20;
      const line = new EchoLine(0, delayMs);
      // packets arriving at each 20 ms step: steady, a gap, a burst, steady, jitter, steady
      const arrivals = [...Array(20).fill(1), 0, 0, 0, 0, 12, ...Array(20).fill(1), ...Array(10).fill([0, 2]).flat(), ...Array(20).fill(1)] as number[];
      const heardAt = new Map<number, number>();
      const delays: { step: number; frames: number }[] = [];
      let next = 1;
      arrivals.forEach((n, step) => {
        for (let i = 0; i < n; i++, next++) {
          heardAt.set(next, step);
          line.heard(new Int16Array(FRAME).fill(next));
        }
        const frame = new Int16Array(FRAME);
        line.mix(frame);
        const v = frame[0]!;
        if (v === 0) return;
        expect(
          frame.every((s) => s === v),
          `frame ${step} is one packet`,
        ).to.equal(true);
        delays.push({ step, frames: step - heardAt.get(v)! });
      });
      expect(delays.length).to.be.above(40);
      for (const d of delays) expect(d.frames, `the echo sent at frame ${d.step}`).to.be.at.most(delayFrames);
      // the last steady stretch: every frame echoes the packet heard delay_ms before
      const lastSteady = delays.filter((d) => d.step >= arrivals.length - 20 + delayFrames);
      expect(lastSteady.length).to.equal(20 - delayFrames);
      for (const d of lastSteady) expect(d.frames, `the echo sent at frame ${d.step}`).to.equal(delayFrames);
    });
  }

  it('the gain scales what is echoed', () => {
    const line = new EchoLine(-20, 20);
    line.heard(new Int16Array(FRAME).fill(1000));
    const frames = [new Int16Array(FRAME), new Int16Array(FRAME)];
    for (const f of frames) line.mix(f);
    expect([frames[0]![0], frames[1]![0]]).to.deep.equal([0, 100]);
  });
});
