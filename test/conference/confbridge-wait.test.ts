// confbridge_join with start_on_enter false and a wait_url on a node without the twiml subsystem: the
// wait document cannot be fetched (a twiml_error note, code 11200) and the caller waits in silence until
// the room starts. That silence is the wait's abort, not a timer: it used to be a 24-day
// clock.sleep(2 ** 31 - 1) cancelled by the abort. The action runs against a conference service that
// starts the room when the test says (the whole path with sipp callers and the twiml subsystem is
// test/twiml/conference/wait.test.ts); its clock records every sleep asked of it.
import { expect } from 'chai';
import type { Action } from '../../core/flow';
import { ConfbridgeJoin } from '../../media-app/flow/actions/confbridge_join';
import type { ActionContext } from '../../media-app/flow/actions/base';
import { realClock, type FlowClock } from '../../media-app/kit/clock';

const ROOM = 'c0000000-0000-4000-8000-000000000001';
const WAIT_URL = 'https://app.example.com/wait';

function waiting() {
  const notes: { event: string; data?: Record<string, unknown> }[] = [];
  const sleeps: number[] = [];
  const clock: FlowClock = { ...realClock, sleep: (ms, signal) => (sleeps.push(ms), realClock.sleep(ms, signal)) };
  const hangup = new AbortController();
  let startRoom!: () => void;
  const started = new Promise<void>((r) => (startRoom = r));
  const joined: string[] = [];
  const conferences = {
    waitStarted: (_id: string, signal: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        if (signal.aborted) return reject(new Error('hung up'));
        signal.addEventListener('abort', () => reject(new Error('hung up')), { once: true });
        void started.then(resolve);
      }),
    join: async (req: { conferenceId: string }) => (joined.push(req.conferenceId), 'hangup' as const),
    holdMusic: () => Promise.reject(new Error('no music on hold: a wait_url was given')),
  };
  const ctx = {
    activeflowId: 'af-1',
    customerId: 'cu-1',
    call: { info: { id: 'call-1' }, prepareMedia: async () => undefined },
    clock,
    services: { conferences },
    signal: hangup.signal,
    note: (event: string, data?: Record<string, unknown>) => void notes.push({ event, data }),
  } as unknown as ActionContext;
  const option = { confbridge_id: ROOM, start_on_enter: false, wait_url: WAIT_URL };
  const action: Action = { id: 'a0000000-0000-4000-8000-000000000001', next_id: '', type: 'confbridge_join', option };
  const run = new ConfbridgeJoin(action, option as never, option).exec(ctx);
  return { run, notes, sleeps, joined, startRoom, hangup };
}

/** Lets the action's promise chains run (it waits on no timer). */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

describe('confbridge_join waiting without the twiml subsystem', () => {
  it('waits in silence, with no timer, until the room starts; then joins', async () => {
    const w = waiting();
    let done = false;
    void w.run.then(() => (done = true));
    await turns();
    expect(done, 'still waiting for the room').to.equal(false);
    expect(w.notes.map((n) => n.event)).to.deep.equal(['conference_waiting', 'twiml_error']);
    expect(w.notes[1]!.data).to.include({ code: 11200, url: WAIT_URL, wait: 'conference' });
    expect(w.sleeps, 'timers asked of the clock').to.deep.equal([]);
    w.startRoom();
    expect(await w.run).to.deep.equal({ kind: 'next' });
    expect(w.joined).to.deep.equal([ROOM]);
    expect(w.notes.map((n) => n.event)).to.deep.equal(['conference_waiting', 'twiml_error', 'conference_left']);
    expect(w.sleeps).to.deep.equal([]);
  });

  it('a hang-up while waiting ends the wait (the silence too); the call never joins', async () => {
    const w = waiting();
    await turns();
    w.hangup.abort();
    let err: unknown;
    await w.run.catch((e: unknown) => (err = e));
    expect((err as Error).message).to.equal('hung up');
    expect(w.joined).to.deep.equal([]);
    expect(w.sleeps).to.deep.equal([]);
  });
});
