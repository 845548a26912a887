// A parked call as a move table (media-app/pbx/park-moves.ts on call/move-table.ts), on virtual time:
// the park timeout is owned by `parked` (a retrieve, a hangup or the timeout itself leaves it), it is
// armed for what remains until the slot's deadline when a failed retrieve puts the call back, and a
// move the table does not allow (a second take, a take after the fallback) is refused. Every case runs
// past the park timeout.
import { expect } from 'chai';
import { ParkMoves } from '../../media-app/pbx/park-moves';
import { virtualTimers } from '../support/virtual-timers';

const PARK_MS = 45_000;
const LONG_AFTER = 10 * PARK_MS;

function parked() {
  const clock = virtualTimers(1_700_000_000_000);
  const start = clock.now();
  const refused: string[] = [];
  const timeouts: number[] = [];
  const moves = new ParkMoves('call-1', { warn: (_o, msg) => void refused.push(msg) }, clock, start + PARK_MS, () => void timeouts.push(clock.now() - start));
  return { clock, moves, refused, timeouts };
}

describe('pbx: a parked call as a move table on virtual time', () => {
  it('the park timeout fires in parked at park_timeout, once', () => {
    const p = parked();
    p.clock.advance(PARK_MS - 1);
    expect(p.timeouts).to.deep.equal([]);
    p.clock.advance(1);
    expect(p.timeouts).to.deep.equal([PARK_MS]);
    expect(p.moves.move('ringback', 'park timeout')).to.equal(true);
    p.clock.advance(LONG_AFTER);
    expect(p.timeouts).to.deep.equal([PARK_MS]);
  });

  it('a park timeout after a retrieve does nothing', () => {
    const p = parked();
    p.clock.advance(10_000);
    expect(p.moves.move('taken', 'retrieved')).to.equal(true);
    expect(p.clock.pending()).to.equal(0);
    p.clock.advance(LONG_AFTER);
    expect(p.timeouts).to.deep.equal([]);
    // the ring-back's late answer, a second retrieve: refused
    expect(p.moves.move('taken', 'ringback_answered')).to.equal(false);
    expect(p.moves.claim()).to.equal(false);
    expect(p.refused).to.deep.equal(['parked call move taken → taken refused']);
  });

  it('a retrieve through a leg that fails: no timeout while it is claimed, then the timeout at the same deadline', () => {
    const p = parked();
    p.clock.advance(10_000);
    expect(p.moves.claim()).to.equal(true);
    expect(p.moves.holding).to.equal(false);
    p.clock.advance(5_000);
    expect(p.moves.unclaim()).to.equal('parked');
    p.clock.advance(PARK_MS - 15_000 - 1);
    expect(p.timeouts).to.deep.equal([]);
    p.clock.advance(1);
    expect(p.timeouts).to.deep.equal([PARK_MS]);
  });

  it('a retrieve that fails after the deadline times the call out at once, not never', () => {
    const p = parked();
    p.clock.advance(40_000);
    p.moves.claim();
    p.clock.advance(LONG_AFTER);
    expect(p.timeouts).to.deep.equal([]);
    expect(p.moves.unclaim()).to.equal('parked');
    p.clock.advance(0);
    expect(p.timeouts).to.deep.equal([40_000 + LONG_AFTER]);
  });

  it('a retrieve during the ring-back goes back to the ring-back; the parked call hanging up ends it all', () => {
    const p = parked();
    p.clock.advance(PARK_MS);
    p.moves.move('ringback', 'park timeout');
    expect(p.moves.claim()).to.equal(true);
    expect(p.moves.unclaim()).to.equal('ringback');
    expect(p.clock.pending()).to.equal(0);
    expect(p.moves.move('left', 'hangup')).to.equal(true);
    expect(p.moves.move('fallback', 'nobody took it')).to.equal(false);
    p.clock.advance(LONG_AFTER);
    expect(p.timeouts).to.deep.equal([PARK_MS]);
  });

  it('nextMove resolves at the next move, at once after a final one', async () => {
    const p = parked();
    let moved = false;
    const next = p.moves.nextMove().then(() => (moved = true));
    await Promise.resolve();
    expect(moved).to.equal(false);
    p.moves.move('left', 'hangup');
    await next;
    expect(moved).to.equal(true);
    await p.moves.nextMove();
  });
});
