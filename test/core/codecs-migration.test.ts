// Migration 0934_codecs (issue #34) keeps what providers had: their free-form `codecs` text becomes the
// ordered list of the names it knew (any case, duplicates dropped), the G.711-first default where it
// knew none; trunks and extensions that existed get their defaults. Run inside a transaction on the
// test database (Postgres DDL is transactional): down to the old column, rows written the old way, up
// again, rolled back at the end.
import { expect } from 'chai';
import { down, up } from '../../core/db/migrations/0934_codecs';
import { newId } from '../../core/ids';
import { testDb } from '../../testkit/db';

class Rollback extends Error {}

describe('migration 0934_codecs', () => {
  it("turns providers' codecs text into the list, keeps order, drops unknown names; defaults elsewhere", async () => {
    const db = await testDb();
    const ids = { a: newId(), b: newId(), c: newId() };
    let rows: { id: string; codecs: string[] }[] = [];
    let defaults: { trunks: string | null; extensions: string | null } = { trunks: null, extensions: null };
    await db
      .transaction(async (trx) => {
        await down(trx);
        const now = new Date();
        // the schema before 0934 (codecs as text), which the table types do not describe: raw SQL
        for (const [id, host, codecs] of [
          [ids.a, 'a.example', 'g722, PCMU,iLBC,pcmu'],
          [ids.b, 'b.example', ''],
          [ids.c, 'c.example', 'G729,OPUS'],
        ] as const) {
          await trx.raw('INSERT INTO providers (id, hostname, codecs, tm_create) VALUES (?, ?, ?, ?)', [id, host, codecs, now]);
        }
        await up(trx);
        rows = await trx('providers').whereIn('id', Object.values(ids)).select('id', 'codecs');
        const col = async (table: string) =>
          ((await trx('information_schema.columns').where({ table_name: table, column_name: 'codecs' }).first()) as { column_default: string | null }).column_default;
        defaults = { trunks: await col('trunks'), extensions: await col('extensions') };
        throw new Rollback();
      })
      .catch((e: unknown) => {
        if (!(e instanceof Rollback)) throw e;
      });
    const by = new Map(rows.map((r) => [r.id, r.codecs]));
    expect(by.get(ids.a)).to.deep.equal(['G722', 'PCMU']);
    expect(by.get(ids.b)).to.deep.equal(['PCMU', 'PCMA', 'G722', 'opus']);
    expect(by.get(ids.c)).to.deep.equal(['opus']);
    expect(defaults.trunks).to.contain('{PCMU,PCMA,G722,opus}');
    expect(defaults.extensions).to.contain('{G722,opus,PCMU,PCMA}');
    // the rolled-back transaction left the schema as migrated
    const col = await db('information_schema.columns').where({ table_name: 'providers', column_name: 'codecs' }).first();
    expect(col.data_type).to.equal('ARRAY');
  });
});
