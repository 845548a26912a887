import { expect } from 'chai';
import { SpeechTurns } from '../../../media-engine/dsp/speech-turns';

/** Feeds a pattern ('v' voiced, '.' silent, one 20 ms frame each); returns [frame index, turn] pairs. */
function run(t: SpeechTurns, pattern: string): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  [...pattern].forEach((c, i) => {
    const e = t.push(c === 'v');
    if (e) out.push([i, e]);
  });
  return out;
}

describe('media-engine/dsp speech turns (VAD hysteresis)', () => {
  it('a turn starts after startMs of voice and stops after stopMs of silence', () => {
    // 60 ms to start (3 frames), 100 ms to stop (5 frames)
    expect(run(new SpeechTurns({ startMs: 60, stopMs: 100 }), '..vvv..vv.....vvv')).to.deep.equal([
      [4, 'start'],
      [13, 'stop'],
      [16, 'start'],
    ]);
  });

  it('short blips do not start a turn; 3 silent frames reset the voiced run, 2 do not', () => {
    expect(run(new SpeechTurns({ startMs: 80, stopMs: 100 }), 'vv...vv...v')).to.deep.equal([]);
    expect(run(new SpeechTurns({ startMs: 80, stopMs: 100 }), 'vv..vv')).to.deep.equal([[5, 'start']]);
  });

  it('defaults: 200 ms to start, 600 ms to stop', () => {
    expect(run(new SpeechTurns(), 'v'.repeat(10) + '.'.repeat(30))).to.deep.equal([
      [9, 'start'],
      [39, 'stop'],
    ]);
  });
});
