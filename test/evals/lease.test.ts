// A claimed eval run is a lease (evals/worker.ts, docs/evals.md): a worker carrying a run renews it, so
// another worker's sweep leaves it alone however long it runs; a run whose worker died (claimed, then
// never renewed) is ended `failed` by another worker's next look once its lease lapsed, with the reason.
// The live run's call dials a loopback UDP socket that never answers, so it stays up while the test looks.
import { expect } from 'chai';
import dgram from 'node:dgram';
import pino from 'pino';
import { useTestApp, type TestApp, type Fixture } from '../../testkit/api';
import { until } from '../../testkit/media-app/harness';
import { evalRunsRepo } from '../../core/repos/eval-runs';
import { evalPinsRepo } from '../../core/repos/eval-pins';
import { newId } from '../../core/ids';
import { numbersRepo } from '../../core/repos/numbers';
import type { EvalRunScenario } from '../../core/repos/eval-scenarios';
import { loadEvalsConfig } from '../../evals/config';
import { parseSip, response, type SipMessage } from '../../evals/sip-message';
import { EvalWorker, LEASE_LOST, WORKER_STOPPED } from '../../evals/worker';
import { storageBackend } from '../../core/storage/backend';
import { eventStreamKey, EventPublisher, EventSubscriber, type PlatformEvent } from '../../core/events/bus';
import type { Redis } from 'ioredis';

/**
 * The eval run events published on the platform's stream from now on, read on a connection of their own.
 * `upTo()` publishes a marker and resolves once it is read: every event published before it has been too.
 */
async function runEvents(redis: Redis, stream: string) {
  const conn = redis.duplicate();
  const sub = new EventSubscriber(conn, { stream, blockMs: 200 });
  const seen: PlatformEvent[] = [];
  sub.on('event', (e: PlatformEvent) => seen.push(e));
  sub.on('error', () => undefined);
  await sub.start();
  return {
    of: (runId: string) => seen.filter((e) => e.resource_id === runId && e.event_type.startsWith('eval_run_')),
    async upTo(): Promise<void> {
      const marker = `marker-${Date.now()}-${Math.random()}`;
      await new EventPublisher(redis, stream).publish('lease_test_marker', 'lease-test', marker, {});
      await until(() => seen.some((e) => e.resource_id === marker), 5000, 'the marker event read back');
    },
    async stop(): Promise<void> {
      const done = sub.stop();
      conn.disconnect();
      await done;
    },
  };
}

describe('evals: a claimed run is a lease, renewed by its worker, ended failed when its worker died', function () {
  this.timeout(30_000);
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s));
  const silent = dgram.createSocket('udp4');
  const workers: EvalWorker[] = [];
  const invites = new Map<string, { m: SipMessage; from: dgram.RemoteInfo }>();
  const LEASE = 600;

  before(async () => {
    silent.on('error', () => undefined);
    // it never answers while the test looks; after, a 486 ends the dial so closing the worker need not wait
    silent.on('message', (buf, from) => {
      const m = parseSip(buf);
      if (m?.method === 'INVITE') invites.set(m.headers.get('call-id')?.[0] ?? '', { m, from });
    });
    await new Promise<void>((r) => silent.bind(0, '127.0.0.1', r));
    // this file's workers claim any running run: leave them only this file's
    await t.ctx.db('eval_runs').where({ status: 'running' }).update({ status: 'failed', error: 'parked by lease.test' });
    // the runs' targets: numbers of the customer's (the worker dials only those, core/evals/targets.ts)
    for (const number of ['+1555', '+1556']) await numbersRepo(t.ctx.db).create({ customer_id: f.customer.id, number, type: 'virtual' });
  });
  after(async () => {
    for (const { m, from } of invites.values()) silent.send(response(m, 486, 'Busy Here', 'lease'), from.port, from.address);
    await Promise.all(workers.map((w) => w.close()));
    silent.close();
  });

  /** what every worker of this file logged, each line parsed */
  const logged: { msg: string; run_id?: string; error?: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line) as (typeof logged)[number]) });

  function worker(): EvalWorker {
    const config = loadEvalsConfig({ EVALS_SIP_EDGE: `127.0.0.1:${silent.address().port}`, EVALS_POLL_MS: '50', EVALS_LEASE_MS: String(LEASE), EVALS_ANSWER_TIMEOUT_MS: '15000', EVALS_MAX_RUNS: '1' });
    const w = new EvalWorker({ db: t.ctx.db, redis: t.ctx.redis, eventStream: eventStreamKey(t.ctx.config.redisKeyPrefix), config, storage: storageBackend(t.ctx.config).files, logger });
    workers.push(w);
    w.start();
    return w;
  }

  it("a carried run keeps its claim past the lease; a dead worker's run ends failed at another worker's look", async () => {
    const repo = evalRunsRepo(t.ctx.db);
    const events = await runEvents(t.ctx.redis, eventStreamKey(t.ctx.config.redisKeyPrefix));
    const scenario = { id: 's', name: 'hold', target: { type: 'number', target: '+1555' }, caller: { language: 'en-US', turns: [{ wait_ms: 10_000 }] }, checks: [] } as unknown as EvalRunScenario;
    const live = await repo.create(f.customer.id, { scenarios: [scenario], calls: 1, concurrency: 1 });
    // one run per worker: A, carrying the live run, cannot take the next one before the dead worker does
    const a = worker();
    await until(async () => (await repo.get(f.customer.id, live.id))?.claimed_by === a.name, 5000, 'worker A claimed the live run');
    // a worker that claims a run and dies: it never renews
    const dead = await repo.create(f.customer.id, { scenarios: [scenario], calls: 1, concurrency: 1 });
    expect((await repo.claim('dead-worker'))?.id).to.equal(dead.id);
    const claimedAt = Date.now();
    worker();
    const swept = await until(
      async () => {
        const r = await repo.get(f.customer.id, dead.id);
        return r?.status === 'running' ? null : r;
      },
      10_000,
      "the dead worker's run ended",
    );
    expect(Date.now() - claimedAt).to.be.at.least(LEASE);
    expect(swept).to.include({ status: 'failed', claimed_by: 'dead-worker', error: `the evals worker carrying it stopped renewing its claim (no renewal for ${LEASE} ms)` });
    expect(swept.tm_end).to.be.an.instanceOf(Date);
    // the dead worker cannot tell the customer: the sweep publishes the run's end, once, with the row's error
    await until(() => events.of(dead.id).length > 0, 5000, "the dead worker's run's eval_run_failed");
    await events.upTo();
    expect(events.of(dead.id).map((e) => e.event_type)).to.deep.equal(['eval_run_failed']);
    expect(events.of(dead.id)[0]!.data).to.deep.include({ id: dead.id, customer_id: f.customer.id, status: 'failed', error: swept.error, calls: 0 });
    await events.stop();
    // the live run was claimed before the dead one: unrenewed, the same sweep would have ended it too
    const carried = (await repo.get(f.customer.id, live.id))!;
    expect(carried).to.include({ status: 'running', claimed_by: a.name });
    expect(Date.now() - carried.tm_update!.getTime()).to.be.below(LEASE);
  });

  it('a run whose lease was lost (swept while its worker carried it) is aborted and ends saying so, not as a stopped worker', async () => {
    const repo = evalRunsRepo(t.ctx.db);
    const scenario = { id: 's', name: 'hold', target: { type: 'number', target: '+1556' }, caller: { language: 'en-US', turns: [{ wait_ms: 10_000 }] }, checks: [] } as unknown as EvalRunScenario;
    const dialled = new Set(invites.keys());
    const events = await runEvents(t.ctx.redis, eventStreamKey(t.ctx.config.redisKeyPrefix));
    const run = await repo.create(f.customer.id, { scenarios: [scenario], calls: 1, concurrency: 1 });
    worker();
    const holder = await until(async () => (await repo.get(f.customer.id, run.id))?.claimed_by, 5000, 'a worker claimed the run');
    const invite = await until(() => [...invites.entries()].find(([id]) => !dialled.has(id)), 5000, "the run's INVITE");
    // another worker's sweep ended it meanwhile (as failLapsed does): at its next renewal the holder no longer holds it
    await t.ctx.db('eval_runs').where({ id: run.id }).update({ status: 'failed', error: 'swept by lease.test' });
    await until(() => logged.find((l) => l.msg === 'eval run lost its lease: aborted' && l.run_id === run.id), 5000, 'the lost lease seen at a renewal');
    // the dial ends (busy), the aborted run ends with the reason it was aborted for
    silent.send(response(invite[1].m, 486, 'Busy Here', 'lease'), invite[1].from.port, invite[1].from.address);
    invites.delete(invite[0]);
    const ended = await until(() => logged.find((l) => l.msg === 'eval run ended' && l.run_id === run.id), 10_000, 'the run ended');
    expect(ended.error).to.equal(LEASE_LOST);
    expect(ended.error).to.not.equal(WORKER_STOPPED);
    // the sweep's row stays as the sweep wrote it: the worker writes only a run it holds
    expect(await repo.get(f.customer.id, run.id)).to.include({ status: 'failed', claimed_by: holder, error: 'swept by lease.test' });
    // nor does it publish for it: no eval_run_progressed for its call, no eval_run_failed saying otherwise than the row
    await events.upTo();
    expect(events.of(run.id)).to.deep.equal([]);
    await events.stop();
  });

  // the sweep publishes a lapsed run's end before it drops the run's pins: one drop failing must cost no run its
  // event, and the other lapsed runs are still dropped (before, a throwing drop ended the sweep's loop there)
  it("a lapsed run whose pins cannot be dropped: every lapsed run still gets its eval_run_failed, the others' pins go", async () => {
    const repo = evalRunsRepo(t.ctx.db);
    const scenario = { id: 's', name: 'dead', target: { type: 'number', target: '+1555' }, caller: { language: 'en-US', turns: [] }, checks: [] } as unknown as EvalRunScenario;
    // Postgres refuses to delete one run's pin (a real failing DELETE, as a lost connection or a lock timeout would)
    const refusedPin = `lease-drop-refused-${newId()}`;
    await t.ctx.db.raw(
      `CREATE OR REPLACE FUNCTION lease_test_refuse_pin_drop() RETURNS trigger AS $$ BEGIN IF OLD.sip_call_id = '${refusedPin}' THEN RAISE EXCEPTION 'lease.test refuses this drop'; END IF; RETURN OLD; END $$ LANGUAGE plpgsql`,
    );
    await t.ctx.db.raw('CREATE TRIGGER lease_test_refuse_pin_drop BEFORE DELETE ON eval_call_pins FOR EACH ROW EXECUTE FUNCTION lease_test_refuse_pin_drop()');
    // read from before the runs lapse: the workers of the tests before this one are still looking
    const events = await runEvents(t.ctx.redis, eventStreamKey(t.ctx.config.redisKeyPrefix));
    // three runs claimed by workers that died at once (their lease lapsed long ago), each with a pin, all
    // appearing at once: the workers still looking can neither claim them nor sweep one before it is whole
    const runs = await t.ctx.db.transaction(async (trx) => {
      const made = [];
      for (let i = 0; i < 3; i++) {
        const run = await evalRunsRepo(trx).create(f.customer.id, { scenarios: [scenario], calls: 1, concurrency: 1 });
        await trx('eval_runs')
          .where({ id: run.id })
          .update({ claimed_by: `dead-${i}`, tm_update: new Date(Date.now() - 60_000) });
        await evalPinsRepo(trx).pin({ customerId: f.customer.id, runId: run.id, sipCallId: i === 1 ? refusedPin : `lease-drop-${run.id}`, aiId: newId(), version: 1 });
        made.push(run);
      }
      return made;
    });
    const refused = runs[1]!;
    try {
      worker();
      for (const run of runs) await until(() => events.of(run.id).length > 0, 10_000, `run ${run.id}'s eval_run_failed`);
      await events.upTo();
      for (const run of runs) {
        expect(
          events.of(run.id).map((e) => e.event_type),
          run.id,
        ).to.deep.equal(['eval_run_failed']);
        expect(await repo.get(f.customer.id, run.id)).to.include({ status: 'failed' });
      }
      await until(() => logged.find((l) => l.msg === "could not drop a lapsed run's pins" && l.run_id === refused.id), 5000, 'the refused drop logged');
      const left = (await t.ctx
        .db('eval_call_pins')
        .whereIn(
          'run_id',
          runs.map((r) => r.id),
        )
        .select('run_id')) as { run_id: string }[];
      expect(left.map((p) => p.run_id)).to.deep.equal([refused.id]);
    } finally {
      await events.stop();
      await t.ctx.db.raw('DROP TRIGGER lease_test_refuse_pin_drop ON eval_call_pins');
      await t.ctx.db.raw('DROP FUNCTION lease_test_refuse_pin_drop()');
    }
  });

  // found by the console's live page: with concurrency, a lane pushed its result, then awaited its save; another
  // lane pushed meanwhile, and the first lane's eval_run_progressed named the other's call (a done count twice,
  // another never), its save possibly landing after the later one's
  it("concurrent lanes: each call's eval_run_progressed once, in order, each naming its own call", async () => {
    const repo = evalRunsRepo(t.ctx.db);
    const events = await runEvents(t.ctx.redis, eventStreamKey(t.ctx.config.redisKeyPrefix));
    // numbers that are not the customer's: each call is refused at once, so the lanes finish together
    const scenarios = ['+1901', '+1902', '+1903', '+1904'].map(
      (target, i) => ({ id: `s${i}`, name: `refused ${i}`, target: { type: 'number', target }, caller: { language: 'en-US', turns: [] }, checks: [] }) as unknown as EvalRunScenario,
    );
    const run = await repo.create(f.customer.id, { scenarios, calls: 3, concurrency: 4 });
    worker();
    await until(async () => ((await repo.get(f.customer.id, run.id))?.status === 'running' ? null : true), 10_000, 'the run ended');
    await events.upTo();
    const progressed = events.of(run.id).filter((e) => e.event_type === 'eval_run_progressed');
    const done = progressed.map((e) => (e.data as { done: number }).done);
    expect(done).to.deep.equal(Array.from({ length: 12 }, (_, i) => i + 1));
    // each event names the call its count added: the result saved at that place
    const saved = (await repo.get(f.customer.id, run.id))!.results;
    expect(saved).to.have.length(12);
    progressed.forEach((e, i) => expect((e.data as { call: { scenario_id: string } }).call.scenario_id, `event ${i + 1}`).to.equal(saved[i]!.scenario_id));
    await events.stop();
  });
});
