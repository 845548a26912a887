// core's type-erasing casts stay few (issue 33): `x as never` and `x as unknown as T` switch the type
// checker off for a value, which is how knex calls were made to compile before core/db/tables.ts declared
// the tables. The casts are found in the syntax tree (a comment or a string saying "as never" is no cast),
// there are at most MAX_CASTS of them, and each one says why on its own line.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT, sourceFiles } from './source-files';

/** The casts core has (core/credentials.ts: the verified JWT claims; core/net/ip-lookup.ts: dns.lookup's overloads). */
export const MAX_CASTS = 2;

export interface Cast {
  at: string;
  kind: 'as never' | 'as unknown as';
  line: string;
}

/** The `as never` and `as unknown as T` casts (and their `<never>x` forms) of one source text. */
export function castsIn(file: string, text: string): Cast[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const lines = text.split('\n');
  const out: Cast[] = [];
  const isCast = (n: ts.Node): n is ts.AsExpression | ts.TypeAssertion => ts.isAsExpression(n) || ts.isTypeAssertionExpression(n);
  const visit = (n: ts.Node) => {
    if (isCast(n)) {
      const inner = ts.isParenthesizedExpression(n.expression) ? n.expression.expression : n.expression;
      const kind = n.type.kind === ts.SyntaxKind.NeverKeyword ? 'as never' : isCast(inner) && inner.type.kind === ts.SyntaxKind.UnknownKeyword ? 'as unknown as' : null;
      if (kind) {
        const line = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
        out.push({ at: `${file}:${line + 1}`, kind, line: lines[line] ?? '' });
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe('architecture: type-erasing casts in core', () => {
  it('finds casts in code and not in comments or strings', () => {
    const text = [
      '// a value that was never set as never before',
      "const s = 'x as never';",
      'const a = f() as never;',
      'const b = (g() as unknown) as Row;',
      'const c = h() as unknown as Row;',
      'const d = <never>k();',
      'const e = m() as unknown;',
      'const f = n() as Row;',
    ].join('\n');
    expect(castsIn('core/x.ts', text).map((c) => `${c.kind}@${c.at}`)).to.deep.equal(['as never@core/x.ts:3', 'as unknown as@core/x.ts:4', 'as unknown as@core/x.ts:5', 'as never@core/x.ts:6']);
  });

  it(`core has at most ${MAX_CASTS} of them, each with a comment on its line saying why`, () => {
    const casts = sourceFiles('core').flatMap((f) => castsIn(f, fs.readFileSync(path.join(ROOT, f), 'utf8')));
    const list = casts.map((c) => `${c.at}: ${c.line.trim()}`).join('\n');
    expect(casts.length, `core's casts (declare table types in core/db/tables.ts instead):\n${list}`).to.be.at.most(MAX_CASTS);
    const unexplained = casts.filter((c) => !/\/\/\s*\S/.test(c.line.slice(c.line.indexOf(c.kind))));
    expect(
      unexplained.map((c) => c.at),
      'a cast without a comment saying why',
    ).to.deep.equal([]);
  });
});
