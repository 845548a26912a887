// Repositories are the only code that names tables (docs/architecture.md "Data layer: who names tables").
// No file of control-api, media-app or sip-server queries a table itself: no knex handle called with a
// table's name (`db('calls')`, `ctx.db<CallRow>('calls')`, `trx('…')`, `knex('…')`), no query method given
// one (`.from('calls')`, `.into`, `.table`, the joins, `schema.hasTable`), no knex handle called with a
// table chosen at run time (`db(TABLES[type])`), and no SQL text naming one (`FROM calls`, `JOIN`, `INTO`,
// `UPDATE`). Their queries live in core/repos/ and in the domain repos of core (core/chats/repo.ts,
// core/webchat/repo.ts, ...), with migrations in core/db/. The table names are the real schema's, read
// from the migrated test database, so a table added later is covered without touching this test.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { testDb } from '../../testkit/db';
import { ROOT, sourceFiles } from './source-files';

/** The rooms that must leave table names to the repositories. */
const ROOMS = ['control-api', 'media-app', 'sip-server'];
/** The names knex handles go by in this code base (`ctx.db`, `this.deps.db`, a transaction, a savepoint). */
const KNEX_HANDLES = new Set(['db', 'knex', 'trx', 'tx', 'sp']);
/** Query-builder methods whose first argument is a table. */
const TABLE_METHODS = new Set(['from', 'into', 'table', 'join', 'leftJoin', 'rightJoin', 'innerJoin', 'fullOuterJoin', 'crossJoin', 'hasTable', 'hasColumn']);
const SQL_TABLE = /\b(?:from|join|into|update|table)\s+"?([a-z_][a-z0-9_]*)"?/gi;

export interface TableUse {
  line: number;
  what: string;
}

function calleeName(e: ts.Expression): string | null {
  if (ts.isIdentifier(e)) return e.text;
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  return null;
}

/** Where `source` names one of `tables` (or picks a table at run time), by line. */
export function tableUses(source: string, tables: ReadonlySet<string>, file = 'sample.ts'): TableUse[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: TableUse[] = [];
  const at = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n)) {
      const name = calleeName(n.expression);
      const first = n.arguments[0];
      if (name && first && (KNEX_HANDLES.has(name) || TABLE_METHODS.has(name))) {
        if (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first)) {
          if (tables.has(first.text)) out.push({ line: at(n), what: `${name}('${first.text}')` });
        } else if (KNEX_HANDLES.has(name)) {
          out.push({ line: at(n), what: `${name}(${first.getText(sf)}): a table chosen at run time` });
        }
      }
    }
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateHead(n) || ts.isTemplateMiddle(n) || ts.isTemplateTail(n)) {
      for (const m of n.text.matchAll(SQL_TABLE)) {
        if (tables.has(m[1]!)) out.push({ line: at(n), what: `SQL "${m[0]}"` });
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe('architecture: repositories are the only code that names tables', function () {
  this.timeout(60_000);
  let tables: Set<string>;

  before(async () => {
    const db = await testDb();
    const r = (await db.raw(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`)) as { rows: { table_name: string }[] };
    tables = new Set(r.rows.map((x) => x.table_name));
  });

  it('reads the schema: the tables the rule protects are there', () => {
    for (const t of ['calls', 'customers', 'recordings', 'outdialtargets', 'events']) expect(tables.has(t), t).to.equal(true);
  });

  it('finds each way of naming a table in a sample, and nothing in code that does not', () => {
    const sample = [
      `const a = await ctx.db('calls').where({ id }).first();`, // 1
      `const b = await trx<CallRow>("customers").forUpdate().first();`, // 2
      `await this.deps.db('recordings').update({ status: 'ended' });`, // 3
      `const c = await knex.select('id').from('outdialtargets');`, // 4
      `const d = await db(TABLES[type]).first();`, // 5
      `const e = await db.raw('SELECT count(*) FROM queuecalls WHERE status = ?', ['waiting']);`, // 6
      'const f = await db.raw(`UPDATE calls SET data = ? WHERE id = ${"?"}`);', // 7
      `const g = await db.schema.hasTable('numbers');`, // 8
      // not a table: a repository call, a file path, an error message, a comment, a column alias
      `const h = await callsRepo(ctx.db).get(id); // db('calls') in a comment is no query`, // 9
      `const i = path.join(dataDir, 'recordings'); throw new Error('no such thing');`, // 10
      `const j = db.raw('(extract(epoch from "timestamp") * 1000000)::bigint as us');`, // 11
      `const k = await ctx.db('not_a_table_here').first();`, // 12
    ].join('\n');
    const found = tableUses(sample, tables);
    expect(found.map((u) => u.line)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(found[0]!.what).to.equal(`db('calls')`);
    expect(found[4]!.what).to.match(/chosen at run time/);
  });

  it('no file of control-api, media-app or sip-server names a table', () => {
    const offences: string[] = [];
    let files = 0;
    for (const room of ROOMS) {
      for (const file of sourceFiles(room)) {
        files++;
        for (const u of tableUses(fs.readFileSync(path.join(ROOT, file), 'utf8'), tables, file)) offences.push(`${file}:${u.line} ${u.what}`);
      }
    }
    expect(files).to.be.above(100);
    expect(offences, 'move these queries into core/repos/ (docs/architecture.md "Data layer: who names tables")').to.deep.equal([]);
  });
});
