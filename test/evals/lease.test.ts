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
import { numbersRepo } from '../../core/repos/numbers';
import type { EvalRunScenario } from '../../core/repos/eval-scenarios';
import { loadEvalsConfig } from '../../evals/config';
import { parseSip, response, type SipMessage } from '../../evals/sip-message';
import { EvalWorker, LEASE_LOST, WORKER_STOPPED } from '../../evals/worker';
import { storageBackend } from '../../core/storage/backend';

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
    const w = new EvalWorker({ db: t.ctx.db, redis: t.ctx.redis, config, storage: storageBackend(t.ctx.config).files, logger });
    workers.push(w);
    w.start();
    return w;
  }

  it("a carried run keeps its claim past the lease; a dead worker's run ends failed at another worker's look", async () => {
    const repo = evalRunsRepo(t.ctx.db);
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
    // the live run was claimed before the dead one: unrenewed, the same sweep would have ended it too
    const carried = (await repo.get(f.customer.id, live.id))!;
    expect(carried).to.include({ status: 'running', claimed_by: a.name });
    expect(Date.now() - carried.tm_update!.getTime()).to.be.below(LEASE);
  });

  it('a run whose lease was lost (swept while its worker carried it) is aborted and ends saying so, not as a stopped worker', async () => {
    const repo = evalRunsRepo(t.ctx.db);
    const scenario = { id: 's', name: 'hold', target: { type: 'number', target: '+1556' }, caller: { language: 'en-US', turns: [{ wait_ms: 10_000 }] }, checks: [] } as unknown as EvalRunScenario;
    const dialled = new Set(invites.keys());
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
  });
});
