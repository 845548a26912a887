// A ringing groupcall as a move table (media-app/groupcall/ring-moves.ts): an answer is taken only while
// it rings, a hangup asked after the answer stops it, and nothing leaves ended (a late answer, a second
// hangup). The groupcall arms no timer of its own: each destination's ring timeout is its call's dial
// timeout, owned by the call's setup phase (test/architecture/call-core.test.ts).
import { expect } from 'chai';
import { GROUPCALL_RING_MOVES, ringMoves } from '../../media-app/groupcall/ring-moves';

function ringing() {
  const refused: string[] = [];
  return { moves: ringMoves('gc-1', { warn: (_o, msg) => void refused.push(msg) }), refused };
}

describe('groupcall: ringing as a move table', () => {
  it('one answer while ringing; a second answer is refused', () => {
    const g = ringing();
    expect(g.moves.move('answered', 'call a answered')).to.equal(true);
    expect(g.moves.move('answered', 'call b answered')).to.equal(false);
    expect(g.moves.move('stopping', 'hangup asked')).to.equal(true);
    expect(g.moves.move('ended', 'no call is live')).to.equal(true);
    expect(g.refused).to.deep.equal(['groupcall move answered → answered refused']);
  });

  it('an answer after a hangup was asked is refused; nothing leaves ended', () => {
    const g = ringing();
    g.moves.move('stopping', 'hangup asked');
    expect(g.moves.move('answered', 'call a answered')).to.equal(false);
    g.moves.move('ended', 'no call is live');
    expect(g.moves.ended).to.equal(true);
    for (const to of ['ringing', 'answered', 'stopping', 'ended'] as const) expect(g.moves.move(to, 'late')).to.equal(false);
    expect(g.moves.timers).to.deep.equal([]);
    expect(GROUPCALL_RING_MOVES.ended).to.deep.equal([]);
  });
});
