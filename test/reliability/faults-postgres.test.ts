// Issue 13 item 4, "Postgres down": the platform runs on a Postgres of this test's own, which is
// stopped (pg_ctl stop -m fast) while calls are up and while callers hang up, then started again.
// No call record may be lost: every answered call ends with its hangup row (status, hangup_by,
// hangup_reason, tm_hangup) and its activeflow ended, written by retries once the database is
// back; calls that arrive while it is down are refused with 503 (no half-made call), and so are API
// requests (503 in the envelope); the audio of live calls goes on meanwhile. PG_OUTAGE_MS sets the outage (default 8 s; the 30 s form:
// `PG_OUTAGE_MS=30000 npx mocha test/reliability/faults-postgres.test.ts`, see docs/reliability.md).
import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { migrate } from '../../core/db/knex';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { createFixture } from '../../testkit/api';
import { killAllSipp, RtpSink, uacWaitsForBye, until } from '../../testkit/media-app/harness';
import { startOwnPostgres, type OwnPostgres } from '../../testkit/reliability/postgres';
import { startFaultPlatform, type FaultPlatform } from './faults/platform';
import { callerHangsUp, gapsBetween, oneCall, percentile } from './faults/sipp';

const OUTAGE_MS = Number(process.env.PG_OUTAGE_MS ?? 8000);
const EMPTY = '00000000-0000-0000-0000-000000000000';

describe('faults: Postgres down while calls run', function () {
  this.timeout(90_000 + 2 * OUTAGE_MS);
  let pg: OwnPostgres;
  let db: Knex;
  let p: FaultPlatform;

  before(async function () {
    this.timeout(120_000);
    pg = await startOwnPostgres();
    // as core/db/knex.ts createDb, without knex's console warnings for each refused connection
    const quiet = { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined };
    db = knexFactory({ client: 'pg', connection: { connectionString: pg.url }, pool: { min: 0, max: 10 }, acquireConnectionTimeout: 10_000, log: quiet });
    await migrate(db);
    p = await startFaultPlatform({ db, databaseUrl: pg.url });
  });
  after(async function () {
    this.timeout(30_000);
    killAllSipp();
    await pg?.start().catch(() => undefined); // (already running)
    await p?.close().catch(() => undefined);
    await db?.destroy().catch(() => undefined);
    pg?.destroy();
  });

  it(`loses no call record through a ${OUTAGE_MS / 1000} s outage; live audio goes on; new calls get 503 meanwhile`, async () => {
    const f = await createFixture(p.api);
    const cid = f.customer.id;
    await trunksRepo(db).create(cid, `trpg${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    // ~1.7 s of speech per sentence: the announcement outlasts the outage by a few seconds
    const sentences = Math.ceil((OUTAGE_MS + 7000) / 1700);
    const talk = { type: 'talk', option: { text: 'This is a long announcement. '.repeat(sentences), language: 'en-US' } };
    const longFlow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, talk, { type: 'hangup' }]) } as never);
    const shortFlow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, { type: 'hangup' }]) } as never);
    // numbers of this attempt's own (a retry's are new)
    const stem = `+8992${String(Date.now()).slice(-7)}`;
    await numbersRepo(db).create({ customer_id: cid, number: `${stem}1`, type: 'virtual', call_flow_id: longFlow.id });
    await numbersRepo(db).create({ customer_id: cid, number: `${stem}2`, type: 'virtual', call_flow_id: shortFlow.id });
    const ruri = (n: string) => `${n}@127.0.0.1:${p.sipPort}`;
    const budget = OUTAGE_MS + 45_000;

    // A: the platform hangs up after the announcement (it ends after the outage); B: the caller hangs up mid-outage
    const sinks = await Promise.all([0, 1, 2, 3, 4, 5].map(() => RtpSink.open()));
    const callsA = sinks.slice(0, 3).map((s) => oneCall(uacWaitsForBye(ruri(`${stem}1`), '+15551110001', s.port, { byeTimeoutMs: budget }), p.sipPort, budget));
    const callsB = sinks.slice(3).map((s) => oneCall(callerHangsUp(ruri(`${stem}1`), s.port, 2500 + OUTAGE_MS / 2), p.sipPort, budget));
    try {
      // answered: progressing, or (on a slow machine) one of B's already hung up on its own
      await until(async () => (await db('calls').where({ customer_id: cid }).whereNotNull('tm_progressing')).length === 6, 40_000, 'six calls answered');
      await new Promise((r) => setTimeout(r, 1000));
      const down = performance.now();
      await pg.stop();

      // C: calls arriving while the database is down are refused cleanly
      await new Promise((r) => setTimeout(r, 1000));
      const refused = await Promise.all([0, 1].map(() => oneCall(uacWaitsForBye(ruri(`${stem}2`), '+15551110002', sinks[0]!.port, { expectStatus: 503 }), p.sipPort, 15_000)));
      for (const r of refused) expect(r.code, `a call during the outage: ${r.errors}${r.messages.slice(-1500)}`).to.equal(0);
      // the API says so too: 503 in the envelope, with Retry-After
      const during = await fetch(`${p.apiUrl}/v1.0/calls?page_size=5&accesskey=${f.accesskey}`);
      expect(during.status).to.equal(503);
      expect(during.headers.get('retry-after')).to.equal('5');
      expect(((await during.json()) as { error: { reason: string } }).error.reason).to.equal('SERVICE_UNAVAILABLE');

      const left = OUTAGE_MS - (performance.now() - down);
      if (left > 0) await new Promise((r) => setTimeout(r, left));
      const up = performance.now();
      await pg.start();

      const results = await Promise.all([...callsA, ...callsB]);
      for (const r of results) expect(r.code, r.errors + r.messages.slice(-2000)).to.equal(0);

      // audio of the calls whose announcement ran through the outage: no hole while the database was down
      const all: number[] = [];
      for (const s of sinks.slice(0, 3)) {
        const gaps = gapsBetween(s.times, down + 200, up);
        all.push(...gaps);
        expect(gaps.length, 'packets during the outage').to.be.greaterThan(((up - down - 200) / 20) * 0.8);
        expect(Math.max(...gaps), `gap during the outage (p99 ${percentile(gaps, 99).toFixed(1)} ms)`).to.be.below(300);
      }
      console.log(`      RTP during the outage: ${all.length} gaps, p50 ${percentile(all, 50).toFixed(1)} ms, p99 ${percentile(all, 99).toFixed(1)} ms, max ${Math.max(...all).toFixed(1)} ms`);
    } finally {
      for (const s of sinks) s.close();
    }

    // every record written once the database is back
    const rows = await until(
      async () => {
        const r = await db('calls').where({ customer_id: cid });
        return r.length === 6 && r.every((c) => c.status === 'hangup') ? r : null;
      },
      30_000,
      'six hangup rows',
    );
    const byLocal = rows.filter((c) => c.hangup_by === 'local');
    const byRemote = rows.filter((c) => c.hangup_by === 'remote');
    expect(byLocal, 'calls the flow hung up').to.have.length(3);
    expect(byRemote, 'calls the caller hung up').to.have.length(3);
    for (const c of rows) {
      expect(c.hangup_reason, c.id).to.equal('normal');
      expect(c.tm_hangup, c.id).to.be.instanceOf(Date);
      expect(c.tm_progressing, c.id).to.be.instanceOf(Date);
      expect(c.activeflow_id, c.id).to.not.equal(EMPTY);
    }
    const flows = await until(
      async () => {
        const r = await db('activeflows').whereIn(
          'id',
          rows.map((c) => c.activeflow_id),
        );
        return r.length === 6 && r.every((a) => a.status === 'ended') ? r : null;
      },
      15_000,
      'six ended activeflows',
    );
    expect(flows).to.have.length(6);
    expect(await db('calls').where({ customer_id: cid }).whereNot({ status: 'hangup' })).to.have.length(0);

    // the API reads them, and a new call runs end to end
    const res = await fetch(`${p.apiUrl}/v1.0/calls?page_size=50&accesskey=${f.accesskey}`);
    expect(res.status).to.equal(200);
    const listed = ((await res.json()) as { result: { id: string; status: string }[] }).result;
    expect(
      listed
        .filter((c) => c.status === 'hangup')
        .map((c) => c.id)
        .sort(),
    ).to.deep.equal(rows.map((c) => c.id).sort());
    const sink = await RtpSink.open();
    try {
      const after = await oneCall(uacWaitsForBye(ruri(`${stem}2`), '+15551110003', sink.port), p.sipPort, 20_000);
      expect(after.code, after.errors + after.messages.slice(-2000)).to.equal(0);
    } finally {
      sink.close();
    }
    await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' })).length === 7, 10_000, 'the call after the outage written');
  });
});
