/**
 * Named prepared statements for hot reads (core/db/prepared.ts) on the real Postgres: the customer
 * read returns what `select *` returned, keeps working when a migration adds a column or changes a
 * listed column's type while a pooled connection holds the statement, and works in a transaction.
 */
import { expect } from 'chai';
import type { Knex } from 'knex';
import pg from 'pg';
import { createDb } from '../../core/db/knex';
import { firstPrepared, namingStatements, prepared, runPrepared, setStatementNaming } from '../../core/db/prepared';
import { CUSTOMER_COLUMNS, repos } from '../../core/repos';
import { newId } from '../../core/ids';
import { testDb, testDatabaseUrl } from '../../testkit/db';

describe('core/db/prepared: named statements for hot reads', function () {
  this.timeout(20_000);
  let db: Knex;
  /** One connection only: every call reuses the connection that holds the statement. */
  let one: Knex;

  before(async () => {
    db = await testDb();
    one = createDb(await testDatabaseUrl(), { poolMax: 1 });
  });
  after(async () => {
    await one?.destroy();
    await db.raw('drop table if exists prepared_probe');
    await db.raw('alter table customers drop column if exists apicpu_probe');
  });

  it('lists every column of customers (a migration that adds one adds it to CUSTOMER_COLUMNS)', async () => {
    const rows = (await db.raw(`select column_name from information_schema.columns where table_schema = current_schema() and table_name = 'customers' order by ordinal_position`)).rows as {
      column_name: string;
    }[];
    expect(rows.map((r) => r.column_name)).to.deep.equal([...CUSTOMER_COLUMNS]);
  });

  it('customers.get returns the row select * returns; null when deleted or unknown', async () => {
    const r = repos(one);
    const c = await r.customers.create({ name: 'prep', email: `prep-${newId()}@example.com`, metadata: { a: 1 } });
    const viaStar = await db('customers').where({ id: c.id }).first();
    expect(await r.customers.get(c.id)).to.deep.equal(viaStar);
    expect(await r.customers.get(newId())).to.equal(null);
    await r.customers.softDelete(c.id);
    expect(await r.customers.get(c.id)).to.equal(null);
    expect((await r.customers.get(c.id, { includeDeleted: true }))?.id).to.equal(c.id);
  });

  it('a bad id fails the call but not the statement: the next read on that connection works', async () => {
    const fresh = createDb(await testDatabaseUrl(), { poolMax: 1 });
    try {
      const r = repos(fresh);
      const c = await r.customers.create({ name: 'prep-bad', email: `prep-${newId()}@example.com` });
      let err: unknown;
      await r.customers.get('not-a-uuid').catch((e: unknown) => (err = e));
      expect((err as { code?: string }).code).to.equal('22P02'); // invalid_text_representation, as the knex read gave
      expect((await r.customers.get(c.id))?.id).to.equal(c.id);
    } finally {
      await fresh.destroy();
    }
  });

  it('a column added while a pooled connection holds the statement: the read still works', async () => {
    const r = repos(one);
    const c = await r.customers.create({ name: 'prep-add', email: `prep-${newId()}@example.com` });
    expect((await r.customers.get(c.id))?.id).to.equal(c.id); // prepared on the pool's one connection
    // What a prepared `select *` does on a connection that holds it (why the columns are listed):
    const star = { name: 'apicpu_probe_star', text: 'select * from customers where id = $1', values: [c.id] };
    const conn = (await one.client.acquireConnection()) as pg.Client;
    try {
      await conn.query(star);
      await db.raw("alter table customers add column apicpu_probe text not null default ''"); // a migration, on another connection
      let err: unknown;
      await conn.query(star).catch((e: unknown) => (err = e));
      expect(String(err)).to.match(/cached plan must not change result type/);
    } finally {
      await one.client.releaseConnection(conn);
    }
    const got = await r.customers.get(c.id);
    expect(got?.id).to.equal(c.id);
    expect(got?.name).to.equal('prep-add');
    await db.raw('alter table customers drop column apicpu_probe');
    expect((await r.customers.get(c.id))?.id).to.equal(c.id);
  });

  it("a listed column's type changed while held: the statement is prepared again once", async () => {
    await db.raw('create table prepared_probe (id int primary key, v int not null)');
    await db.raw('insert into prepared_probe values (1, 7)');
    const stmt = prepared('test_prepared_probe', 'select id, v from prepared_probe where id = $1');
    expect(await firstPrepared(one, stmt, [1])).to.deep.equal({ id: 1, v: 7 });
    await db.raw('alter table prepared_probe alter column v type text');
    expect(await firstPrepared(one, stmt, [1])).to.deep.equal({ id: 1, v: '7' });
    expect(await firstPrepared(one, stmt, [1])).to.deep.equal({ id: 1, v: '7' });
    expect(await firstPrepared(one, stmt, [2])).to.equal(null);
  });

  it('runs on the transaction connection inside a transaction (sees its uncommitted rows)', async () => {
    const id = newId();
    await one.transaction(async (trx) => {
      const r = repos(trx);
      await r.customers.create({ id, name: 'prep-trx', email: `prep-${newId()}@example.com` });
      expect((await r.customers.get(id))?.name).to.equal('prep-trx');
      expect((await r.customers.get(id))?.name).to.equal('prep-trx'); // second call: already prepared on this connection
      expect(await runPrepared(trx, prepared('test_prepared_count', 'select count(*)::int as n from customers where id = $1'), [id])).to.deep.equal([{ n: 1 }]);
    });
    expect(await repos(db).customers.get(id)).to.not.equal(null);
  });

  describe('behind a pooler that does not keep named statements', () => {
    afterEach(() => setStatementNaming(true));

    it('a statement gone from the server (26000): the call runs unnamed, and so does every later one', async () => {
      const r = repos(one);
      const c = await r.customers.create({ name: 'prep-gone', email: `prep-${newId()}@example.com` });
      expect((await r.customers.get(c.id))?.id).to.equal(c.id);
      const conn = (await one.client.acquireConnection()) as pg.Client;
      try {
        await conn.query('deallocate customers_get_live'); // what a server connection switched under the client looks like
      } finally {
        await one.client.releaseConnection(conn);
      }
      expect((await r.customers.get(c.id))?.id).to.equal(c.id);
      expect(namingStatements()).to.equal(false);
      expect((await r.customers.get(c.id))?.name).to.equal('prep-gone');
    });

    it('a name already taken on the server (42P05): the call runs unnamed', async () => {
      const fresh = createDb(await testDatabaseUrl(), { poolMax: 1 });
      try {
        const r = repos(fresh);
        const c = await r.customers.create({ name: 'prep-taken', email: `prep-${newId()}@example.com` });
        await fresh.raw('prepare customers_get_live as select 1'); // another client's statement on the same server connection
        expect((await r.customers.get(c.id))?.name).to.equal('prep-taken');
        expect(namingStatements()).to.equal(false);
      } finally {
        await fresh.destroy();
      }
    });
  });

  it('refuses select *, ? placeholders and one name for two texts', () => {
    expect(() => prepared('test_star', 'select * from customers where id = $1')).to.throw(/list the columns/);
    expect(() => prepared('test_q', 'select id from customers where id = ?')).to.throw(/\$n placeholders/);
    expect(() => prepared('test_order', 'select id from customers where id = $2 and name = $1')).to.throw(/in order/);
    expect(() => prepared('test_reuse', 'select id from customers where id = $1 or detail = $1')).to.throw(/once each/);
    expect(prepared('test_ok', 'select id from customers where id = $1 and name = $2').knexText).to.equal('select id from customers where id = ? and name = ?');
    prepared('test_twice', 'select 1');
    expect(() => prepared('test_twice', 'select 2')).to.throw(/different SQL/);
  });
});
