// The evals benchmark's wait for a run (scripts/bench/evals/run-end.ts): the run's end event on its topic,
// against a deadline from the run's shape; a run that never ends fails the bench instead of being polled for ever.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { EventPublisher } from '../../core/events/bus';
import { newId } from '../../core/ids';
import { awaitRunEnd, runDeadlineMs } from '../../scripts/bench/evals/run-end';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:56379/1';

describe('evals benchmark: a run awaited through its end event', () => {
  const stream = `test-bench-run-end-${newId()}`;
  let redis: Redis;
  before(() => {
    redis = new Redis(REDIS_URL);
    redis.on('error', () => undefined);
  });
  after(async () => {
    await redis.del(stream);
    redis.disconnect();
  });

  it('the deadline is one call bound per wave of concurrent calls, plus a fixed slack', () => {
    const b = { answerTimeoutMs: 20_000, callMs: 35_000, settleMs: 10_000 };
    expect(runDeadlineMs(50, 50, b)).to.equal(65_000 + 30_000);
    expect(runDeadlineMs(10, 5, b)).to.equal(2 * 65_000 + 30_000);
    expect(runDeadlineMs(11, 5, b)).to.equal(3 * 65_000 + 30_000);
  });

  it("resolves on the run's own eval_run_finished, not on another run's nor on its progress", async () => {
    const cid = newId();
    const run = newId();
    const publisher = new EventPublisher(redis, stream);
    // the events go out before create() answers the id: an end read meanwhile must not be dropped
    const create = async () => {
      await publisher.publish('eval_run_finished', cid, newId(), { status: 'finished' }); // another run
      await publisher.publish('eval_run_progressed', cid, run, { done: 1 });
      await publisher.publish('eval_run_finished', cid, run, { status: 'finished', passed: 1 });
      return run;
    };
    const e = await awaitRunEnd(redis, cid, create, 5000, stream);
    expect(e.event_type).to.equal('eval_run_finished');
    expect(e.resource_id).to.equal(run);
    expect(e.data).to.deep.equal({ status: 'finished', passed: 1 });
  });

  it('a failed run ends the wait as well', async () => {
    const cid = newId();
    const run = newId();
    const publisher = new EventPublisher(redis, stream);
    const create = async () => {
      await publisher.publish('eval_run_failed', cid, run, { status: 'failed', error: 'lease lapsed' });
      return run;
    };
    expect((await awaitRunEnd(redis, cid, create, 5000, stream)).event_type).to.equal('eval_run_failed');
  });

  it('rejects once the deadline passes with no end event (the bench fails, bounded in time)', async () => {
    const started = Date.now();
    const err = await awaitRunEnd(redis, newId(), async () => newId(), 300, stream).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/did not end within its deadline/);
    expect(Date.now() - started).to.be.within(250, 3000);
  });
});
