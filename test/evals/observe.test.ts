// An observation's settle wait (evals/observe.ts) is woken by the platform's events, not a poll: a
// hangup written with no event is not seen, then its `call_hangup` ends the wait at once (well inside
// a long settle); the fixed pauses only give a poll time to show itself. The
// run's signal ends the wait at once (a worker closing does not wait out EVALS_SETTLE_MS). Real
// Postgres and the real event stream on Redis; the reader closes when the last wait ends.
import { expect } from 'chai';
import pino from 'pino';
import { getEventListeners } from 'node:events';
import { useTestApp, type TestApp, type Fixture } from '../../testkit/api';
import { callsRepo } from '../../core/repos/calls';
import { EventPublisher } from '../../core/events/bus';
import { CallEvents } from '../../evals/call-events';
import { observeCall } from '../../evals/observe';

describe('evals: the settle wait wakes on events and honours the run signal', function () {
  this.timeout(20_000);
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s));
  const SETTLE = 8000;

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
    const events = new CallEvents({ redis: t.ctx.redis, logger: pino({ level: 'silent' }) });
    const call = await liveCall(`obs-hangup-${Date.now()}`);
    const t0 = Date.now();
    let done = false;
    const seen = observeCall({ db: t.ctx.db, events }, f.customer.id, call.sip_call_id!, t0, SETTLE, new AbortController().signal).finally(() => (done = true));
    expect(events.reading).to.equal(true);
    // the wait has read the call once (still up); the hangup written with no event is not seen, as a poll would
    await new Promise((r) => setTimeout(r, 500));
    await callsRepo(t.ctx.db).hangup(call.id, 'normal_clearing');
    await new Promise((r) => setTimeout(r, 700));
    expect(done, 'settled without an event').to.equal(false);
    const published = Date.now();
    await new EventPublisher(t.ctx.redis).publish('call_hangup', f.customer.id, call.id, {});
    const observed = await seen;
    expect(observed?.callId).to.equal(call.id);
    expect(Date.now() - published, 'observed on the event, well before the settle deadline').to.be.below(2000);
    expect(events.reading).to.equal(false);
  });

  it("the run's signal ends the wait at once and leaves no listener on it", async () => {
    const events = new CallEvents({ redis: t.ctx.redis, logger: pino({ level: 'silent' }) });
    const call = await liveCall(`obs-abort-${Date.now()}`);
    const run = new AbortController();
    const t0 = Date.now();
    const seen = observeCall({ db: t.ctx.db, events }, f.customer.id, call.sip_call_id!, t0, SETTLE, run.signal);
    await new Promise((r) => setTimeout(r, 300));
    expect(getEventListeners(run.signal, 'abort')).to.have.length(1);
    run.abort();
    const observed = await seen;
    expect(observed?.callId).to.equal(call.id);
    expect(Date.now() - t0).to.be.below(SETTLE / 2);
    expect(events.reading).to.equal(false);
  });
});
