// A domain shape is declared once (issue 33). web/ is bundled on its own and imports nothing outside
// web/ (imports.test.ts), so the console keeps a copy of the spec's Address: this test holds the copy to
// the declaration in core/address.ts (the same fields, the same optionality, the same types). The dashboard's
// response is declared once in zod (core/calls/dashboard-schema.ts) and the console takes its types by `import type`;
// so are an eval run's JSON and its summary's parts (core/evals/run-shape.ts).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT, sourceFiles } from './source-files';

/** The members of interface `name` in `file`, as `field?: type` lines. */
export function membersOf(file: string, name: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const decl = sf.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name);
  if (!decl) throw new Error(`${file} declares no interface ${name}`);
  return decl.members.filter(ts.isPropertySignature).map((m) => `${m.name.getText(sf)}${m.questionToken ? '?' : ''}: ${m.type?.getText(sf) ?? 'any'}`);
}

describe('architecture: shared domain shapes', () => {
  it('reads an interface as its members', () => {
    expect(membersOf('core/address.ts', 'Address')).to.include.members(['type: string', 'target: string', 'target_name?: string']);
  });

  it("the console's Address is core/address.ts's", () => {
    expect(membersOf('web/console/api.ts', 'Address')).to.deep.equal(membersOf('core/address.ts', 'Address'));
  });

  it("the console's dashboard types are the server's: re-exported from core/calls/dashboard-schema.ts, no copy in web/", () => {
    const api = fs.readFileSync(path.join(ROOT, 'web/console/api.ts'), 'utf8');
    expect(api).to.match(/^export type \{[^}]*\bDashboard\b[^}]*\} from '\.\.\/\.\.\/core\/calls\/dashboard-schema';$/m);
    const copies = ['core', 'control-api', 'web', 'test']
      .flatMap(sourceFiles)
      .filter((f) => /^(?:export )?(?:interface|type) (?:Dashboard\w*|Percentiles|AiLatency|WorstCall)\b/m.test(fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(copies).to.deep.equal(['core/calls/dashboard-schema.ts']);
  });

  it("the console's eval run types are the server's: re-exported from core/evals/run-shape.ts (evalRunJson's return type), no copy in web/", () => {
    const api = fs.readFileSync(path.join(ROOT, 'web/console/api.ts'), 'utf8');
    const reexport = /^export type \{([^}]*)\} from '\.\.\/\.\.\/core\/evals\/run-shape';$/m.exec(api);
    expect(reexport, 'api.ts re-exports core/evals/run-shape by type').to.not.equal(null);
    for (const name of ['EvalRunJson as EvalRun', 'StageLatency as EvalStage', 'CheckTally as EvalCheckTally', 'Comparison as EvalComparison']) expect(reexport![1]).to.include(name);
    expect(fs.readFileSync(path.join(ROOT, 'core/repos/eval-runs.ts'), 'utf8')).to.match(/export function evalRunJson\([^)]*\): EvalRunJson \{/);
    const copies = ['core', 'control-api', 'web']
      .flatMap(sourceFiles)
      .filter((f) =>
        /^(?:export )?(?:interface|type) (?:EvalRun|EvalStage|EvalCheckTally|EvalComparison|EvalRunJson|StageLatency|CheckTally|Comparison)\b/m.test(fs.readFileSync(path.join(ROOT, f), 'utf8')),
      );
    expect(copies).to.deep.equal(['core/evals/run-shape.ts']);
  });

  it('no other room declares its own address (Address, AgentAddress, ...) or activeflow record', () => {
    const found = ['core', 'control-api', 'media-app', 'web'].flatMap(sourceFiles).filter((f) => {
      const text = fs.readFileSync(path.join(ROOT, f), 'utf8');
      // an address of the spec's shape (it has a target; core/net's CheckedAddress is an IP address), or an activeflow record
      return /^export interface \w*Address \{[^}]*\btarget\b/m.test(text) || /^export interface ActiveflowRecord\w* \{/m.test(text);
    });
    expect(found.sort()).to.deep.equal(['core/address.ts', 'core/flow/activeflow.ts', 'web/console/api.ts']);
  });
});
