/**
 * The backlog gauges control-api reads at scrape time, through its real metrics listener and real
 * Postgres: the webhook backlog counts pending deliveries only, and reads them through a partial
 * index (the delivery log keeps every row forever: a scan of it on every scrape would grow with it).
 */
import { expect } from 'chai';
import { buildTestApp, createFixture, type TestApp } from '../../testkit/api';
import { startMetricsListener, type MetricsListener } from '../../control-api/ops';

describe('backlog gauges (metrics listener, real Postgres)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let listener: MetricsListener;

  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    listener = await startMetricsListener(t.platform.metrics, { host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await listener.close();
    await t.close();
  });

  const scrape = async (name: string) => {
    const text = await (await fetch(`http://127.0.0.1:${listener.address.port}/metrics`)).text();
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : NaN;
  };

  it('counts pending webhook deliveries among many delivered ones, through the partial index', async () => {
    const f = await createFixture(t.ctx);
    const insert = (n: number, status: string) =>
      t.ctx.db.raw(
        `INSERT INTO webhook_deliveries (id, customer_id, event_id, event_type, target, uri, method, body, status, tm_create)
         SELECT gen_random_uuid(), ?::uuid, gen_random_uuid(), 'call_hangup', 'customer', 'https://example.test/h', 'POST', '{}', ?, now()
         FROM generate_series(1, ?)`,
        [f.customer.id, status, n],
      );
    const before = await scrape('webhook_deliveries_pending');
    expect(before).to.be.at.least(0);
    try {
      await insert(50_000, 'delivered');
      await insert(7, 'pending');
      await insert(3, 'failed');
      await t.ctx.db.raw('ANALYZE webhook_deliveries');
      expect(await scrape('webhook_deliveries_pending')).to.equal(before + 7);
      expect(await scrape('queuecalls_waiting')).to.be.at.least(0);
      const plan = (await t.ctx.db.raw(`EXPLAIN SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`)) as { rows: { 'QUERY PLAN': string }[] };
      const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(text, text).to.contain('webhook_deliveries_pending_idx');
      expect(text, text).to.not.contain('Seq Scan');
    } finally {
      // the other suites of this process share the database
      await t.ctx.db('webhook_deliveries').where({ customer_id: f.customer.id }).delete();
    }
  });
});
