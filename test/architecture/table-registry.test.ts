// The table registry (core/db/tables.ts, knex's `Tables` augmentation) imports no repository: the row
// types it maps tables to are declared in core/db/rows/ (one file per repository, which re-exports them),
// so the registry does not import the 50+ repositories that query through it (issue 53). A "user" is
// any file that calls a knex handle with one of the registry's table names.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const REGISTRY = 'core/db/tables.ts';

/** The files `file` reaches through its relative imports (itself included), root-relative. */
function reach(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  for (const f of ts.preProcessFile(text, true, true).importedFiles) {
    if (!f.fileName.startsWith('.')) continue;
    const to = path.posix.normalize(path.posix.join(path.posix.dirname(file), f.fileName)).replace(/\.(js|ts)$/, '');
    const hit = [`${to}.ts`, `${to}/index.ts`].find((c) => fs.existsSync(path.join(ROOT, c)));
    if (hit) reach(hit, seen);
  }
  return seen;
}

/** The table names the registry declares (the keys of `interface Tables`). */
function tableNames(): string[] {
  const text = fs.readFileSync(path.join(ROOT, REGISTRY), 'utf8');
  const body = /interface Tables \{([\s\S]*?)\n {2}\}/.exec(text)![1]!;
  return [...body.matchAll(/^\s*(\w+):/gm)].map((m) => m[1]!);
}

/** Whether `text` queries one of `tables` through a knex handle (`db('calls')`, `trx<CallRow>('calls')`). */
export function queriesTable(text: string, tables: readonly string[]): boolean {
  return [...text.matchAll(/\b(?:db|knex|trx|tx|sp)\s*(?:<[^>()]*>)?\(\s*['"`](\w+)['"`]/g)].some((m) => tables.includes(m[1]!));
}

describe('architecture: the table registry imports none of its users', () => {
  it('queriesTable sees a query and nothing else', () => {
    expect(queriesTable("const r = await db('calls').where({ id });", ['calls'])).to.equal(true);
    expect(queriesTable("await trx<CallRow>('calls').update(x);", ['calls'])).to.equal(true);
    expect(queriesTable("import type { CallRow } from './rows/calls';", ['calls'])).to.equal(false);
    expect(queriesTable("db('calls_archive')", ['calls'])).to.equal(false);
  });

  it('core/db/tables.ts imports only the row files of core/db/rows/, and nothing it reaches queries a table', () => {
    const tables = tableNames();
    expect(tables.length, 'the registry declares the tables').to.be.above(60);
    const reached = [...reach(REGISTRY)].filter((f) => f !== REGISTRY);
    expect(reached.length, 'the scan follows the imports').to.be.above(50);
    const text = fs.readFileSync(path.join(ROOT, REGISTRY), 'utf8');
    const own = ts
      .preProcessFile(text, true, true)
      .importedFiles.map((f) => f.fileName)
      .filter((n) => n.startsWith('.'));
    expect(own.filter((n) => !n.startsWith('./rows/'))).to.deep.equal([]);
    const users = reached.filter((f) => queriesTable(fs.readFileSync(path.join(ROOT, f), 'utf8'), tables));
    expect(users, users.join('\n')).to.deep.equal([]);
  });
});
