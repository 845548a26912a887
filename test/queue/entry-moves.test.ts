// A caller's queue entry as a move table (media-app/queue/entry-moves.ts on call/move-table.ts), on
// virtual time: each timer lives only in the states that own it (the wait timeout over waiting and
// connecting, the service limit in service), a move the table does not allow is refused (logged,
// false) and changes nothing. Every case runs past the entry's longest timer.
import { expect } from 'chai';
import { ENTRY_MOVES, ENTRY_TIMERS, EntryMoves } from '../../media-app/queue/entry-moves';
import { virtualTimers } from '../support/virtual-timers';

const WAIT_MS = 30_000;
const SERVICE_MS = 60_000;
/** past the longest timer of an entry, from any point */
const LONG_AFTER = WAIT_MS + SERVICE_MS + 60_000;

function entry() {
  const clock = virtualTimers();
  const refused: string[] = [];
  const fired: { what: string; at: number }[] = [];
  const moves = new EntryMoves('qc-1', { warn: (_o, msg) => void refused.push(msg) }, clock);
  moves.waitTimeout(WAIT_MS, () => void fired.push({ what: 'wait', at: clock.now() }));
  const limit = () => moves.serviceLimit(SERVICE_MS, () => void fired.push({ what: 'service_limit', at: clock.now() }));
  return { clock, moves, refused, fired, limit };
}

describe('queue: an entry as a move table on virtual time', () => {
  it('the wait timeout fires in waiting, at wait_timeout from the join and not before', () => {
    const e = entry();
    e.clock.advance(WAIT_MS - 1);
    expect(e.fired).to.deep.equal([]);
    e.clock.advance(1);
    expect(e.fired).to.deep.equal([{ what: 'wait', at: WAIT_MS }]);
    e.clock.advance(LONG_AFTER);
    expect(e.fired.length).to.equal(1);
    expect(e.refused).to.deep.equal([]);
  });

  it('a ring that goes unanswered (waiting → connecting → waiting) keeps the wait timeout where it was', () => {
    const e = entry();
    e.clock.advance(10_000);
    expect(e.moves.move('connecting', 'an agent is claimed')).to.equal(true);
    e.clock.advance(15_000);
    expect(e.moves.move('waiting', 'the agent did not answer')).to.equal(true);
    e.clock.advance(WAIT_MS - 25_000 - 1);
    expect(e.fired).to.deep.equal([]);
    e.clock.advance(1);
    expect(e.fired).to.deep.equal([{ what: 'wait', at: WAIT_MS }]);
  });

  it('the wait timeout fires while an agent rings (connecting), not once the caller is served', () => {
    const ringing = entry();
    ringing.moves.move('connecting', 'an agent is claimed');
    ringing.clock.advance(WAIT_MS);
    expect(ringing.fired).to.deep.equal([{ what: 'wait', at: WAIT_MS }]);

    const served = entry();
    served.moves.move('connecting', 'an agent is claimed');
    served.clock.advance(WAIT_MS - 1);
    expect(served.moves.move('service', 'the agent answered')).to.equal(true);
    expect(served.moves.timers).to.deep.equal([]);
    served.clock.advance(LONG_AFTER);
    expect(served.fired).to.deep.equal([]);
  });

  it('the service limit is armed only in service and fires there; the caller leaving first cancels it', () => {
    const e = entry();
    e.limit();
    expect(e.moves.timers).to.deep.equal(['wait']);
    expect(e.refused).to.deep.equal(['queuecall timer service_limit not armed in waiting']);
    e.moves.move('connecting', 'an agent is claimed');
    e.clock.advance(5_000);
    e.moves.move('service', 'the agent answered');
    e.limit();
    e.clock.advance(SERVICE_MS - 1);
    expect(e.fired).to.deep.equal([]);
    e.clock.advance(1);
    expect(e.fired).to.deep.equal([{ what: 'service_limit', at: 5_000 + SERVICE_MS }]);

    const left = entry();
    left.moves.move('connecting', 'an agent is claimed');
    left.moves.move('service', 'the agent answered');
    left.limit();
    left.clock.advance(SERVICE_MS - 1);
    left.moves.move('ended', 'the caller hung up');
    left.clock.advance(LONG_AFTER);
    expect(left.fired).to.deep.equal([]);
    expect(left.clock.pending()).to.equal(0);
  });

  it('the service limit lives as long as the bridge: cancelled when it ends, before the service end is written', async () => {
    const e = entry();
    e.moves.move('connecting', 'an agent is claimed');
    e.moves.move('service', 'the agent answered');
    let endBridge!: () => void;
    const bridged = new Promise<void>((r) => (endBridge = r));
    const hangups: number[] = [];
    const serving = e.moves.serveBridge(bridged, SERVICE_MS, () => void hangups.push(e.clock.now()));
    expect(e.moves.timers).to.deep.equal(['service_limit']);
    e.clock.advance(SERVICE_MS - 10);
    // the agent hangs up 10 ms before the limit; the service's end (the agent's status write, the
    // record's close) takes longer than that while the entry is still in service
    endBridge();
    await serving;
    expect(e.moves.state).to.equal('service');
    expect(e.moves.timers).to.deep.equal([]);
    e.clock.advance(LONG_AFTER);
    expect(hangups).to.deep.equal([]);
    expect(e.moves.move('ended', 'service over')).to.equal(true);

    // while the bridge lasts, the limit fires at service_timeout
    const long = entry();
    long.moves.move('connecting', 'an agent is claimed');
    long.moves.move('service', 'the agent answered');
    let endLong!: () => void;
    const longBridge = new Promise<void>((r) => (endLong = r));
    const longServing = long.moves.serveBridge(longBridge, SERVICE_MS, () => {
      hangups.push(long.clock.now());
      endLong(); // the agent's side hung up ends the bridge
    });
    long.clock.advance(SERVICE_MS);
    await longServing;
    expect(hangups).to.deep.equal([SERVICE_MS]);
    expect(long.clock.pending()).to.equal(0);
  });

  it('a kick during connecting ends the entry: no timer stays, the late unanswered ring cannot put it back to waiting', () => {
    const e = entry();
    e.moves.move('connecting', 'an agent is claimed');
    e.clock.advance(1_000);
    expect(e.moves.move('ended', 'kick')).to.equal(true);
    expect(e.moves.ended).to.equal(true);
    expect(e.clock.pending()).to.equal(0);
    // the ring resolves unanswered after the kick: the dispatcher's put-back is refused
    expect(e.moves.move('waiting', 'the agent did not answer')).to.equal(false);
    expect(e.moves.move('service', 'the agent answered')).to.equal(false);
    expect(e.moves.state).to.equal('ended');
    expect(e.refused).to.deep.equal(['queuecall move ended → waiting refused', 'queuecall move ended → service refused']);
    e.limit();
    e.moves.waitTimeout(WAIT_MS, () => void e.fired.push({ what: 'wait again', at: e.clock.now() }));
    e.clock.advance(LONG_AFTER);
    expect(e.fired).to.deep.equal([]);
  });

  it('the table: a caller is served only from connecting, and nothing leaves ended', () => {
    expect(ENTRY_MOVES.waiting).not.to.include('service');
    expect(ENTRY_MOVES.ended).to.deep.equal([]);
    expect(ENTRY_TIMERS.service_limit).to.deep.equal(['service']);
    const e = entry();
    expect(e.moves.move('service', 'served without a ring')).to.equal(false);
    expect(e.moves.state).to.equal('waiting');
  });
});
