// The supervision mix's steps (media-app/pbx/supervise-mix.ts): from any state the supervisor can be in
// (just joined, or in any mode) to any mode, no state between two steps lets a party hear the supervisor
// that hears it neither before nor after. Found in review: whisper → listen dropped the whisper before
// muting, so the customer could hear the supervisor between the two; the supervisor joined unmuted and
// was muted after, so both sides could hear a supervisor joining to listen.
import { expect } from 'chai';
import { SUPERVISE_MODES } from '../../core/pbx/supervisions';
import { applyStep, hearers, JOIN_MUTED, modeSteps, type MixState } from '../../media-app/pbx/supervise-mix';

const settled = (mode: (typeof SUPERVISE_MODES)[number]): MixState => modeSteps(mode).reduce(applyStep, { muted: JOIN_MUTED === 'in', whisperTo: null });

describe('pbx supervision: the mix changes in an order that never lets the wrong party hear', () => {
  const starts: [string, MixState][] = [['joined', { muted: JOIN_MUTED === 'in', whisperTo: null }], ...SUPERVISE_MODES.map((m): [string, MixState] => [m, settled(m)])];

  for (const [from, start] of starts)
    for (const to of SUPERVISE_MODES)
      it(`${from} → ${to}: every state between is heard by no one beyond the two ends`, () => {
        const end = settled(to);
        const [a, b] = [hearers(start), hearers(end)];
        let s = start;
        for (const step of modeSteps(to)) {
          s = applyStep(s, step);
          const h = hearers(s);
          expect(h.peer && !a.peer && !b.peer, `the peer hears the supervisor after ${JSON.stringify(step)}`).to.equal(false);
          expect(h.target && !a.target && !b.target, `the target hears the supervisor after ${JSON.stringify(step)}`).to.equal(false);
        }
        expect(s).to.deep.equal(end);
      });

  it('a supervisor that has just joined is heard by nobody, whatever its mode will be', () => {
    expect(hearers(starts[0]![1])).to.deep.equal({ target: false, peer: false });
  });

  it('each mode is heard by whom it says: listen nobody, whisper the target alone, barge both', () => {
    expect(hearers(settled('listen'))).to.deep.equal({ target: false, peer: false });
    expect(hearers(settled('whisper'))).to.deep.equal({ target: true, peer: false });
    expect(hearers(settled('barge'))).to.deep.equal({ target: true, peer: true });
  });
});
