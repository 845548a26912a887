// Migration 0974_twilio_alerts_time_index: the Twilio alerts retention pass (core/repos/twilio-alerts.ts
// pruneBefore) deletes every customer's records older than the retention, a batch of 5000 a statement,
// chosen by `tm_create < $1` across customers. The (customer_id, tm_create, id) index of 0964 cannot serve
// that (it leads with the customer): each batch read the whole table. The planner's choice for the very
// statement pruneBefore sends (caught off knex's query event), on 20 000 rows of 8 customers spread over
// a month, a few percent of them aged: without 0974 a sequential scan, with it the (tm_create, id) index.
// Run inside a transaction on the test database (Postgres DDL and ANALYZE are transactional), rolled back.
import { expect } from 'chai';
import type { Knex } from 'knex';
import { down, up } from '../../core/db/migrations/0974_twilio_alerts_time_index';
import { customersRepo } from '../../core/repos/customers';
import { twilioAlertsRepo } from '../../core/repos/twilio-alerts';
import { testDb } from '../../testkit/db';

class Rollback extends Error {}

const ROWS = 20_000;
const MINUTE = 60_000;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, depth first. */
function nodes(n: PlanNode): PlanNode[] {
  return [n, ...(n.Plans ?? []).flatMap(nodes)];
}

/** How the table's rows are read in the plan of `q`: "Seq Scan" or "<node type> <index>" for each scan of twilio_alerts. */
async function scans(trx: Knex.Transaction, q: { sql: string; bindings: readonly unknown[] }): Promise<string[]> {
  // knex reports the SQL as sent to pg ($1, $2 ...; in order): back to knex's placeholders
  const sql = q.sql.replace(/\$\d+/g, '?');
  const r = (await trx.raw(`EXPLAIN (FORMAT JSON) ${sql}`, q.bindings as Knex.RawBinding[])) as { rows: { 'QUERY PLAN': { Plan: PlanNode }[] }[] };
  return nodes(r.rows[0]!['QUERY PLAN'][0]!.Plan)
    .filter((n) => n['Relation Name'] === 'twilio_alerts' || n['Index Name']?.startsWith('twilio_alerts'))
    .map((n) => (n['Index Name'] ? `${n['Node Type']} ${n['Index Name']}` : n['Node Type']));
}

describe('migration 0974_twilio_alerts_time_index', function () {
  this.timeout(30_000);

  it("the retention pass's batch reads twilio_alerts by (tm_create, id), not the whole table", async () => {
    const db = await testDb();
    let without: string[] = [];
    let withIndex: string[] = [];
    let pruned = -1;
    await db
      .transaction(async (trx) => {
        const customers: string[] = [];
        for (let i = 0; i < 8; i++) customers.push((await customersRepo(trx).create({ email: `idx${process.pid}-${i}@example.test`, name: 'idx', status: 'active' } as never)).id);
        // one row a minute back from now, round-robin over the customers: ~14 days, so a 13-day retention ages ~7 %
        await trx.raw(
          `INSERT INTO twilio_alerts (id, customer_id, call_id, error_code, log_level, alert_text, tm_create)
           SELECT gen_random_uuid(), (?::uuid[])[1 + g % ?], NULL, 11200, 'error', 'x', now() - g * interval '1 minute'
           FROM generate_series(1, ?) g`,
          [`{${customers.join(',')}}`, customers.length, ROWS],
        );
        await trx.raw('ANALYZE twilio_alerts');
        const before = new Date(Date.now() - 13 * 24 * 60 * MINUTE);
        // the statement pruneBefore sends, as knex sends it
        const sent: { sql: string; bindings: readonly unknown[] }[] = [];
        const onQuery = (q: { sql: string; bindings?: readonly unknown[] }) => void (/^delete/i.test(q.sql) && sent.push({ sql: q.sql, bindings: q.bindings ?? [] }));
        trx.on('query', onQuery);
        pruned = await twilioAlertsRepo(trx).pruneBefore(before);
        trx.off('query', onQuery);
        expect(sent.length).to.be.at.least(1);
        const statement = sent[0]!;
        await down(trx);
        without = await scans(trx, statement);
        await up(trx);
        withIndex = await scans(trx, statement);
        throw new Rollback();
      })
      .catch((e: unknown) => {
        if (!(e instanceof Rollback)) throw e;
      });
    expect(pruned).to.be.within(ROWS * 0.05, ROWS * 0.09);
    expect(without, 'without 0974').to.include('Seq Scan');
    expect(withIndex, 'with 0974').to.not.include('Seq Scan');
    expect(withIndex.some((s) => s.endsWith(' twilio_alerts_tm_create_id'))).to.equal(true);
  });
});
