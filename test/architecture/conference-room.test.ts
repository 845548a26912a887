// One writer for a conference member's state (issue 55, esl/): the room (esl/conference/room.ts) is the
// only writer; each change is a method of the room that applies it with what follows from it (the
// engine's mutes, who hears whom, the events), and the API (api.ts, relate.ts, member-play.ts) asks it.
// Held two ways, found in the syntax tree (a comment or a string naming them is no use):
//   - Member (room-member.ts) is read-only to its readers: every field it declares is readonly or
//     private, it has no setter, and what it gives to read is no mutable Map, Set or array, so the type
//     checker refuses `m.talking = false` or `m.relations.set(…)` anywhere;
//   - the state's writer, memberState, is named in esl/conference/room*.ts only.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { isDeclaration, ROOT, sourceFiles } from './source-files';

const DIRS = ['esl', 'media-app', 'testkit', 'test', 'core'];
const WRITER = 'memberState';
const ROOM_FILES = /^esl\/conference\/room[^/]*\.ts$/;

const parse = (file: string, text: string) => ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);

/** Where the code of `text` names `name` (an identifier: an import, a call, a re-export), as `file:line`. */
export function namesIn(file: string, text: string, name: string): string[] {
  const sf = parse(file, text);
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isIdentifier(n) && n.text === name) out.push(`${file}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

const has = (n: ts.Node, kind: ts.SyntaxKind) => (ts.canHaveModifiers(n) ? (ts.getModifiers(n) ?? []).some((m) => m.kind === kind) : false);
const hidden = (n: ts.Node) => has(n, ts.SyntaxKind.PrivateKeyword) || has(n, ts.SyntaxKind.ProtectedKeyword) || (ts.isPropertyDeclaration(n) && ts.isPrivateIdentifier(n.name));
/** A declared type its reader could change through: Map, Set, an array (their Readonly forms are not). */
const mutableType = (t: ts.TypeNode | undefined, sf: ts.SourceFile) => t !== undefined && /^(Map|Set|Array)\s*<|\[\]$/.test(t.getText(sf).trim());

/** What class `cls` of `text` lets its readers write: fields not readonly, setters, mutable collections it gives. */
export function writableSurface(file: string, text: string, cls: string): string[] {
  const sf = parse(file, text);
  const decl = sf.statements.find((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === cls);
  if (!decl) throw new Error(`${file} declares no class ${cls}`);
  const out: string[] = [];
  const ctor = decl.members.find(ts.isConstructorDeclaration);
  const params = (ctor?.parameters ?? []).filter((p) => ts.isParameterPropertyDeclaration(p, ctor!));
  for (const m of [...decl.members, ...params]) {
    if (hidden(m) || has(m, ts.SyntaxKind.StaticKeyword)) continue;
    const name = m.name?.getText(sf) ?? '?';
    if (ts.isSetAccessorDeclaration(m)) out.push(`${name}: a setter`);
    else if ((ts.isPropertyDeclaration(m) || ts.isParameter(m)) && !has(m, ts.SyntaxKind.ReadonlyKeyword)) out.push(`${name}: not readonly`);
    if ((ts.isPropertyDeclaration(m) || ts.isParameter(m) || ts.isGetAccessorDeclaration(m)) && mutableType(m.type, sf)) out.push(`${name}: a ${m.type!.getText(sf)}`);
    if (ts.isPropertyDeclaration(m) && !m.type && m.initializer && /^new (Map|Set)\b|^\[/.test(m.initializer.getText(sf))) out.push(`${name}: a mutable collection`);
  }
  return out;
}

describe('architecture: a conference member has one writer, its room', () => {
  it('the rules see a writer named in code and a writable member, not a comment or a string', () => {
    const text = ["// memberState(m) is the room's", "const s = 'memberState';", "import { memberState } from './room-member';", 'memberState(m).talking = false;'].join('\n');
    expect(namesIn('esl/x.ts', text, WRITER)).to.deep.equal(['esl/x.ts:3', 'esl/x.ts:4']);
    const cls = [
      'export class Member {',
      '  readonly left: Promise<void>;',
      '  talking = false;',
      '  readonly relations = new Map<number, R>();',
      '  readonly mixed: Set<() => void>;',
      '  private s: S;',
      '  constructor(readonly id: number, public channel: C, flags: F) {}',
      '  get held(): boolean { return this.s.held; }',
      '  get files(): number[] { return this.s.files; }',
      '  set speak(v: boolean) { this.s.speak = v; }',
      '  get gone(): ReadonlySet<number> { return this.s.gone; }',
      '}',
    ].join('\n');
    expect(writableSurface('esl/x.ts', cls, 'Member')).to.deep.equal([
      'talking: not readonly',
      'relations: a mutable collection',
      'mixed: a Set<() => void>',
      'files: a number[]',
      'speak: a setter',
      'channel: not readonly',
    ]);
  });

  it('a Member (esl/conference/room-member.ts) gives its readers nothing to write', () => {
    const f = 'esl/conference/room-member.ts';
    expect(writableSurface(f, fs.readFileSync(path.join(ROOT, f), 'utf8'), 'Member')).to.deep.equal([]);
  });

  it(`the member state's writer, ${WRITER}, is named in esl/conference/room*.ts only`, () => {
    const uses = DIRS.flatMap(sourceFiles)
      .filter((f) => !isDeclaration(f))
      .filter((f) => f !== 'test/architecture/conference-room.test.ts')
      .map((f) => [f, fs.readFileSync(path.join(ROOT, f), 'utf8')] as const)
      // the name in a comment or a string is no use: the syntax tree of each file that has the word says
      .flatMap(([f, text]) => (text.includes(WRITER) ? namesIn(f, text, WRITER) : []));
    expect(
      uses.filter((u) => ROOM_FILES.test(u.split(':')[0]!)),
      'the room writes through it',
    ).to.not.deep.equal([]);
    expect(
      uses.filter((u) => !ROOM_FILES.test(u.split(':')[0]!)),
      `${WRITER} outside the room: ask the room (a method of ConferenceRoom) instead`,
    ).to.deep.equal([]);
  });
});
