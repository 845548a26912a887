// The table types of core/db/tables.ts (knex's `Tables` augmentation) against the schema the migrations
// build in a real Postgres: every table is declared, every declared row has exactly the table's columns,
// each nullable where the column is, and of the TypeScript type its column type reads as. The row types are
// read with the TypeScript compiler from the declaration itself, so a row type that drifts from a
// migration (a column added, made nullable, read as the wrong type) fails here.
import { expect } from 'chai';
import path from 'node:path';
import ts from 'typescript';
import { testDb } from '../../testkit/db';

const ROOT = path.resolve(__dirname, '../..');
const TABLES_FILE = path.join(ROOT, 'core/db/tables.ts');

interface Column {
  table: string;
  column: string;
  udt: string;
  nullable: boolean;
  view: boolean;
}

/** What a column of this Postgres type reads as through pg (core/db/knex.ts: int8 as number). null: any (jsonb). */
const TS_OF_UDT: Record<string, 'string' | 'number' | 'boolean' | 'Date' | 'string[]' | null> = {
  text: 'string',
  varchar: 'string',
  uuid: 'string',
  tsvector: 'string',
  int4: 'number',
  int8: 'number',
  float4: 'number',
  bool: 'boolean',
  timestamptz: 'Date',
  _text: 'string[]',
  _uuid: 'string[]',
  jsonb: null,
};

interface Declared {
  type: string;
  nullable: boolean;
  kind: 'string' | 'number' | 'boolean' | 'Date' | 'string[]' | 'other';
}

/** The base row type of every table declared in `Tables`: column → its TypeScript type. */
function declaredTables(): Map<string, Map<string, Declared>> {
  const program = ts.createProgram([TABLES_FILE], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    esModuleInterop: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(TABLES_FILE);
  if (!file) throw new Error('core/db/tables.ts not found');
  let tables: ts.InterfaceDeclaration | undefined;
  file.forEachChild((n) => {
    if (ts.isModuleDeclaration(n) && ts.isStringLiteral(n.name) && n.name.text === 'knex/types/tables' && n.body && ts.isModuleBlock(n.body)) {
      for (const s of n.body.statements) if (ts.isInterfaceDeclaration(s) && s.name.text === 'Tables') tables = s;
    }
  });
  if (!tables) throw new Error("core/db/tables.ts declares no `Tables` in module 'knex/types/tables'");
  const kindOf = (t: ts.Type): Declared['kind'] => {
    if (t.flags & ts.TypeFlags.StringLike) return 'string';
    if (t.flags & ts.TypeFlags.NumberLike) return 'number';
    if (t.flags & ts.TypeFlags.BooleanLike) return 'boolean';
    if (checker.isArrayType(t)) {
      const [el] = checker.getTypeArguments(t as ts.TypeReference);
      const parts = el?.isUnion() ? el.types : el ? [el] : [];
      return parts.length && parts.every((x) => x.flags & ts.TypeFlags.StringLike) ? 'string[]' : 'other';
    }
    if (t.symbol?.name === 'Date') return 'Date';
    return 'other';
  };
  const out = new Map<string, Map<string, Declared>>();
  for (const member of tables.members) {
    if (!ts.isPropertySignature(member) || !member.type) continue;
    const name = member.name.getText(file);
    const composite = checker.getTypeFromTypeNode(member.type);
    const base = checker.getPropertyOfType(composite, 'base');
    if (!base) throw new Error(`${name}: not a Knex.CompositeTableType`);
    const row = checker.getTypeOfSymbol(base);
    const cols = new Map<string, Declared>();
    for (const p of checker.getPropertiesOfType(row)) {
      const t = checker.getTypeOfSymbol(p);
      const parts = t.isUnion() ? t.types : [t];
      const nullable = parts.some((x) => x.flags & ts.TypeFlags.Null);
      const kinds = new Set(parts.filter((x) => !(x.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined))).map(kindOf));
      cols.set(p.name, { type: checker.typeToString(t), nullable, kind: kinds.size === 1 ? [...kinds][0]! : 'other' });
    }
    out.set(name, cols);
  }
  return out;
}

describe('core/db/tables.ts: the declared table and view types match the migrated schema', function () {
  this.timeout(120_000);
  let schema: Column[];
  let declared: Map<string, Map<string, Declared>>;

  before(async () => {
    const db = await testDb();
    const r = await db.raw(
      `select c.table_name, c.column_name, c.udt_name, c.is_nullable, t.table_type from information_schema.columns c
         join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
        where c.table_schema = current_schema() and c.table_name not like 'knex\\_%' order by c.table_name, c.ordinal_position`,
    );
    schema = (r.rows as { table_name: string; column_name: string; udt_name: string; is_nullable: string; table_type: string }[]).map((c) => ({
      table: c.table_name,
      column: c.column_name,
      udt: c.udt_name,
      nullable: c.is_nullable === 'YES',
      view: c.table_type === 'VIEW',
    }));
    declared = declaredTables();
  });

  it('declares every table and view of the schema, and no other', () => {
    const tables = [...new Set(schema.map((c) => c.table))].sort();
    expect(tables.length).to.be.greaterThan(60);
    expect([...declared.keys()].sort()).to.deep.equal(tables);
  });

  it('declares each table with exactly its columns', () => {
    const problems: string[] = [];
    for (const [table, cols] of declared) {
      const real = schema.filter((c) => c.table === table).map((c) => c.column);
      for (const c of real) if (!cols.has(c)) problems.push(`${table}.${c}: a column the row type lacks`);
      for (const c of cols.keys()) if (!real.includes(c)) problems.push(`${table}.${c}: declared, but no such column`);
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('declares each column nullable exactly where the schema lets it be null, and of the type it reads as', () => {
    const problems: string[] = [];
    for (const c of schema) {
      const d = declared.get(c.table)?.get(c.column);
      if (!d) continue; // the test above names it
      // Postgres reports every column of a view nullable: a view's row type says what its definition gives
      if (!c.view && d.nullable !== c.nullable) problems.push(`${c.table}.${c.column}: ${c.nullable ? 'nullable' : 'NOT NULL'} in the schema, declared ${d.type}`);
      const want = TS_OF_UDT[c.udt];
      if (want === undefined) problems.push(`${c.table}.${c.column}: column type ${c.udt} has no TypeScript type here`);
      else if (want !== null && d.kind !== want) problems.push(`${c.table}.${c.column}: ${c.udt} reads as ${want}, declared ${d.type}`);
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
