// An observation's settle wait (evals/observe.ts) is woken by the platform's events, not a poll: a
// hangup written with no event is not seen (no read of the call happens between the write and its
// event: the test counts the wait's reads from knex's 'query-response' events and gives a poll a
// window to show itself), then its `call_hangup` ends the wait at once (well inside a long settle). The
// run's signal ends the wait at once (a worker closing does not wait out EVALS_SETTLE_MS). Real
// Postgres and the real event stream on Redis; the reader closes when the last wait ends.
import { expect } from 'chai';
import pino from 'pino';
import { getEventListeners } from 'node:events';
import { useTestApp, type TestApp, type Fixture } from '../../testkit/api';
import { callsRepo } from '../../core/repos/calls';
import { eventStreamKey, eventPublisher } from '../../core/events/bus';
import { CallEvents } from '../../evals/call-events';
import { observeCall } from '../../evals/observe';

describe('evals: the settle wait wakes on events and honours the run signal', function () {
  this.timeout(20_000);
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s));
  const SETTLE = 8000;

  /** The wait's reads of the call (a query bound to its SIP Call-ID), as knex reports them done. */
  function readsOf(sipCallId: string) {
    let count = 0;
    let waiters: (() => void)[] = [];
    const onQuery = (_res: unknown, q: { bindings?: unknown[] }) => {
      if (!q.bindings?.includes(sipCallId)) return;
      count++;
      for (const w of waiters) w();
      waiters = [];
    };
    t.ctx.db.on('query-response', onQuery);
    return {
      get count() {
        return count;
      },
      /** Resolves once `n` reads were done. */
      reached(n: number): Promise<void> {
        return count >= n ? Promise.resolve() : new Promise<void>((r) => waiters.push(() => void (count >= n && r())));
      },
      /** Whether a read happens within `ms` (the window a poll is given to show itself). */
      another(ms: number): Promise<boolean> {
        const at = count;
        return new Promise<boolean>((r) => {
          const timer = setTimeout(() => r(false), ms);
          waiters.push(() => {
            if (count === at) return;
            clearTimeout(timer);
            r(true);
          });
        });
      },
      stop: () => void t.ctx.db.off('query-response', onQuery),
    };
  }

  async function liveCall(sipCallId: string) {
    return callsRepo(t.ctx.db).create({
      customer_id: f.customer.id,
      source: { type: 'tel', target: '+899100000099' },
      destination: { type: 'tel', target: '+899100000098' },
      direction: 'incoming',
      status: 'progressing',
      sip_call_id: sipCallId,
    });
  }

  it('the wait reads the records on an event, not by polling: a call_hangup event ends it at once; the reader closes after', async () => {
    const events = new CallEvents({ redis: t.ctx.redis, stream: eventStreamKey(t.ctx.config.redisKeyPrefix), logger: pino({ level: 'silent' }) });
    const call = await liveCall(`obs-hangup-${Date.now()}`);
    const t0 = Date.now();
    let done = false;
    const reads = readsOf(call.sip_call_id!);
    const seen = observeCall({ db: t.ctx.db, events }, f.customer.id, call.sip_call_id!, t0, SETTLE, new AbortController().signal).finally(() => (done = true));
    expect(events.reading).to.equal(true);
    // the wait has read the call once (still up); the hangup written with no event is not read again, as a poll would
    await reads.reached(1);
    await callsRepo(t.ctx.db).hangup(call.id, 'normal_clearing');
    expect(await reads.another(700), 'the call read again with no event').to.equal(false);
    expect(done, 'settled without an event').to.equal(false);
    reads.stop();
    const published = Date.now();
    await eventPublisher(t.ctx).publish('call_hangup', f.customer.id, call.id, {});
    const observed = await seen;
    expect(observed?.callId).to.equal(call.id);
    expect(Date.now() - published, 'observed on the event, well before the settle deadline').to.be.below(2000);
    expect(events.reading).to.equal(false);
  });

  it("the run's signal ends the wait at once and leaves no listener on it", async () => {
    const events = new CallEvents({ redis: t.ctx.redis, stream: eventStreamKey(t.ctx.config.redisKeyPrefix), logger: pino({ level: 'silent' }) });
    const call = await liveCall(`obs-abort-${Date.now()}`);
    const run = new AbortController();
    const t0 = Date.now();
    const reads = readsOf(call.sip_call_id!);
    const seen = observeCall({ db: t.ctx.db, events }, f.customer.id, call.sip_call_id!, t0, SETTLE, run.signal);
    // waiting: it has read the call (still up)
    await reads.reached(1);
    reads.stop();
    expect(getEventListeners(run.signal, 'abort')).to.have.length(1);
    run.abort();
    const observed = await seen;
    expect(observed?.callId).to.equal(call.id);
    expect(Date.now() - t0).to.be.below(SETTLE / 2);
    expect(events.reading).to.equal(false);
  });
});
