// The judge of "gone after the frames in flight" (heard.ts) on frame patterns: a gap inside what was in
// flight is still flight (session 49's CI failed a dub test on one: a frame without the tone, then the
// tone's in-flight frames after it); the tone after the flight, or a flight longer than can be, fails.
import { expect } from 'chai';
import { expectGoneWithin, framesThroughLast } from './heard';

const frames = (s: string) => [...s].map((c) => c === '1');

describe('esl heard: gone after the frames in flight', () => {
  it('a gap inside the frames in flight: gone after them', () => {
    expect(framesThroughLast(frames('1101000000'))).to.equal(4);
    expect(() => expectGoneWithin(frames('1101000000'), 6, 'the tone')).to.not.throw();
  });

  it('nothing heard, or only in flight: gone', () => {
    expect(framesThroughLast(frames('0000000'))).to.equal(0);
    expect(() => expectGoneWithin(frames('111111000000'), 6, 'the tone')).to.not.throw();
  });

  it('the tone again after the flight, or a flight longer than can be: not gone', () => {
    expect(() => expectGoneWithin(frames('1100000001'), 6, 'the tone')).to.throw(/at most 6 \(by frame: 1100000001\)/);
    expect(() => expectGoneWithin(frames('1111111000'), 6, 'the tone')).to.throw(/heard only in the frames in flight/);
  });
});
