// The brief's short functions, as a rule: no function in the tracked TypeScript sources spans more than
// MAX_LINES lines. A function is every function-like node (declarations, methods, constructors, accessors,
// arrow functions, function expressions); it is measured over its whole span, first line to last, inner
// functions included, because that is the length a reader scrolls through (an inner function is also
// measured on its own). Two kinds are containers, not functions to split, by rule:
// - a table: a function whose largest object or array literal covers at least TABLE_SHARE of its lines
//   (a route table, a zod schema builder, a handler table); the functions inside it are measured alone;
// - a mocha callback: the function passed to describe/it/before/after/beforeEach/afterEach (a suite's
//   body is a list of tests; the helpers declared in it are measured alone).
// There is no allow-list: the last eight long functions were split (issue 53), and a function that grows
// past the limit is split by what its parts own, not excused. Generated and vendored files are not ours.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { isDeclaration, ROOT, trackedFiles } from './source-files';

export const MAX_LINES = 80;
export const TABLE_SHARE = 0.75;
const SOURCE = /\.(ts|tsx|mts|cts)$/;
const MOCHA = new Set(['describe', 'it', 'before', 'after', 'beforeEach', 'afterEach', 'context', 'specify']);

export interface LongFunction {
  path: string;
  line: number;
  name: string;
  lines: number;
}

/** The name a reader would search for: the declared name, else the variable, property or call it sits in. */
function nameOf(node: ts.Node): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (named.name && (ts.isIdentifier(named.name) || ts.isStringLiteral(named.name) || ts.isPrivateIdentifier(named.name))) return named.name.text;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isPropertyAssignment(parent) && (ts.isIdentifier(parent.name) || ts.isStringLiteral(parent.name))) return parent.name.text;
  if (ts.isPropertyDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText().slice(0, 40)})`;
  return '(anonymous)';
}

function isMochaCallback(node: ts.Node): boolean {
  const call = node.parent;
  if (!ts.isCallExpression(call) || !call.arguments.includes(node as ts.Expression)) return false;
  return isMochaName(call.expression);
}

/** describe, it.only, describe.skip, (HAVE_X ? describe : describe.skip) */
function isMochaName(e: ts.Expression): boolean {
  if (ts.isParenthesizedExpression(e)) return isMochaName(e.expression);
  if (ts.isConditionalExpression(e)) return isMochaName(e.whenTrue) && isMochaName(e.whenFalse);
  if (ts.isPropertyAccessExpression(e)) return isMochaName(e.expression);
  return ts.isIdentifier(e) && MOCHA.has(e.text);
}

/** The lines covered by the largest object or array literal inside `fn`, not looking into inner functions. */
function largestLiteral(sf: ts.SourceFile, fn: ts.Node): number {
  let best = 0;
  const visit = (n: ts.Node): void => {
    if (ts.isObjectLiteralExpression(n) || ts.isArrayLiteralExpression(n)) {
      best = Math.max(best, span(sf, n));
      return;
    }
    if (n !== fn && ts.isFunctionLike(n)) return;
    ts.forEachChild(n, visit);
  };
  visit(fn);
  return best;
}

function span(sf: ts.SourceFile, n: ts.Node): number {
  const first = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
  const last = sf.getLineAndCharacterOfPosition(n.getEnd()).line;
  return last - first + 1;
}

type FunctionLike = ts.FunctionDeclaration | ts.MethodDeclaration | ts.ConstructorDeclaration | ts.GetAccessorDeclaration | ts.SetAccessorDeclaration | ts.ArrowFunction | ts.FunctionExpression;

function isFunctionWithBody(n: ts.Node): n is FunctionLike {
  return (
    (ts.isFunctionDeclaration(n) ||
      ts.isMethodDeclaration(n) ||
      ts.isConstructorDeclaration(n) ||
      ts.isGetAccessorDeclaration(n) ||
      ts.isSetAccessorDeclaration(n) ||
      ts.isArrowFunction(n) ||
      ts.isFunctionExpression(n)) &&
    n.body !== undefined
  );
}

/** The functions of one source text longer than `max` lines that are neither tables nor mocha callbacks. */
export function longFunctions(file: string, text: string, max: number): LongFunction[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: LongFunction[] = [];
  const visit = (n: ts.Node): void => {
    if (isFunctionWithBody(n)) {
      const lines = span(sf, n);
      const exempt = isMochaCallback(n) || largestLiteral(sf, n) >= TABLE_SHARE * lines;
      if (lines > max && !exempt) {
        const line = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
        out.push({ path: file, line, name: nameOf(n), lines });
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe('architecture: short functions', () => {
  it(`no function is longer than ${MAX_LINES} lines but tables and mocha callbacks`, () => {
    const files = trackedFiles(SOURCE).filter((f) => !isDeclaration(f));
    expect(files.length, 'the walk finds the sources').to.be.greaterThan(500);
    const long = files.flatMap((f) => longFunctions(f, fs.readFileSync(path.join(ROOT, f), 'utf8'), MAX_LINES));
    expect(
      long.map((l) => `${l.path}:${l.line} ${l.name} ${l.lines} lines`),
      'split these by what their parts do',
    ).to.deep.equal([]);
  });

  it('measures the whole span, skips tables and mocha callbacks, counts inner functions alone', () => {
    const body = (n: number): string => 'x();\n'.repeat(n);
    const text = [
      `function outer() {\n${body(2)}const inner = () => {\n${body(3)}};\n}`,
      `function table() {\nreturn {\n${'a: 1,\n'.repeat(5)}};\n}`,
      `describe('s', () => {\n${body(6)}});`,
      `class C {\nm() {\n${body(5)}}\n}`,
    ].join('\n');
    const got = longFunctions('t.ts', text, 4).map((l) => `${l.line} ${l.name} ${l.lines}`);
    expect(got).to.deep.equal(['1 outer 9', '4 inner 5', '28 m 7']);
  });
});
