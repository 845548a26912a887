// Floors (issue 53): rooms import downward only. kit/ is media-app's floor (media-app/kit/README.md);
// no room imports a room that imports it back, over the top-level rooms and over media-app's folders
// (its root files, app.ts and its company, count as one folder, "(root)"). The media-app back edges not
// yet removed are listed in BACK_EDGES, each with why; every entry must still be needed, so the list only
// shrinks. Before issue 53: 27 two-way folder pairs in media-app and core ↔ media-engine; after it: none
// once BACK_EDGES is set aside (23 pairs counting them).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { isDeclaration, ROOT, sourceFiles } from './source-files';

const ROOMS = ['core', 'control-api', 'media-app', 'media-engine', 'sip-server', 'sip-config', 'esl', 'evals', 'web', 'types', 'scripts', 'test', 'testkit'];

/** Top-level imports that close a two-way pair, each with why. */
const ROOM_BACK_EDGES: readonly { from: RegExp; to: RegExp; why: string }[] = [
  // scripts/build-web imports only esbuild: the pair is of folders, never of files
  { from: /^testkit\/webphone\/harness$/, to: /^scripts\/build-web$/, why: 'testkit bundles the browser apps with the build setup.sh runs' },
];

/** media-app imports against the floors, still there; each entry names its way out. */
const BACK_EDGES: readonly { from: RegExp; to: RegExp; why: string }[] = [
  // subsystem.ts (the contract every subsystem implements) sits at the root beside subsystems.ts (the list
  // app.ts starts): the contract belongs below the features, with the flow services it fills
  { from: /^media-app\/.+\//, to: /^media-app\/subsystem$/, why: 'the Subsystem contract lives in the root' },
  // a cross-node leg is a party of the host's room: the room's party interface belongs in a contract file
  { from: /^media-app\/xnode\/leg$/, to: /^media-app\/conference\/(room|party-state)$/, why: 'xnode/leg imports the conference room' },
];

/** Every relative import of the tree as [from, to], root-relative, without extensions. */
function edges(): [string, string][] {
  const out: [string, string][] = [];
  for (const f of ROOMS.flatMap(sourceFiles).filter((f) => !isDeclaration(f))) {
    const text = fs.readFileSync(path.join(ROOT, f), 'utf8');
    const names = ts.preProcessFile(text, true, true).importedFiles.map((x) => x.fileName);
    for (const m of text.matchAll(/\b(?:import|require)\(\s*['"]([^'"]+)['"]\s*\)/g)) names.push(m[1]!);
    for (const n of names.filter((x) => x.startsWith('.'))) {
      const to = path.posix.normalize(path.posix.join(path.posix.dirname(f), n)).replace(/\.(js|ts|tsx)$/, '');
      const dir = fs.existsSync(path.join(ROOT, to)) && fs.statSync(path.join(ROOT, to)).isDirectory();
      out.push([f.replace(/\.tsx?$/, ''), dir ? `${to}/index` : to]);
    }
  }
  return out;
}

const topOf = (f: string) => f.split('/')[0]!;
/** media-app's folder of a file ('(root)' for its root files), or null outside media-app. */
export function folderOf(f: string): string | null {
  const p = f.split('/');
  if (p[0] !== 'media-app') return null;
  return p.length > 2 ? p[1]! : '(root)';
}

/** The pairs {a, b} with imports both ways, each as 'a <-> b' (a < b), given how to name a file's room. */
export function twoWay(list: readonly [string, string][], roomOf: (f: string) => string | null): string[] {
  const seen = new Set<string>();
  for (const [f, t] of list) {
    const a = roomOf(f);
    const b = roomOf(t);
    if (a && b && a !== b) seen.add(`${a}>${b}`);
  }
  const pairs = [...seen].map((k) => k.split('>') as [string, string]).filter(([a, b]) => a < b && seen.has(`${b}>${a}`));
  return pairs.map(([a, b]) => `${a} <-> ${b}`).sort();
}

const excused = (list: typeof BACK_EDGES, [f, t]: [string, string]) => list.find((x) => x.from.test(f) && x.to.test(t));

describe('architecture: floors', function () {
  this.timeout(30_000);
  let all: [string, string][];
  before(() => (all = edges()));

  it('twoWay finds a pair and nothing else', () => {
    const sample: [string, string][] = [
      ['media-app/call/a', 'media-app/kit/x'],
      ['media-app/flow/b', 'media-app/ai/c'],
      ['media-app/ai/c', 'media-app/flow/services'],
      ['media-app/ai/c', 'media-app/ai/d'],
    ];
    expect(twoWay(sample, folderOf)).to.deep.equal(['ai <-> flow']);
    expect(twoWay(sample, topOf)).to.deep.equal([]);
  });

  it('kit/ imports nothing of media-app outside kit/', () => {
    const kit = all.filter(([f]) => f.startsWith('media-app/kit/'));
    expect(kit.length, 'the scan saw kit/ files').to.be.above(5);
    const bad = kit.filter(([, t]) => t.startsWith('media-app/') && !t.startsWith('media-app/kit/')).map((e) => e.join(' → '));
    expect(bad, bad.join('\n')).to.deep.equal([]);
  });

  it('no top-level room imports a room that imports it back (core ↔ media-engine included)', () => {
    expect(twoWay(all, topOf)).to.include('scripts <-> testkit'); // the one excused below: the scan sees it
    const rest = all.filter((e) => !excused(ROOM_BACK_EDGES, e));
    expect(twoWay(rest, topOf)).to.deep.equal([]);
  });

  it('no folder of media-app imports one that imports it back, but the listed back edges', () => {
    const rest = all.filter((e) => !excused(BACK_EDGES, e));
    const pairs = twoWay(rest, folderOf);
    expect(pairs, pairs.join('\n')).to.deep.equal([]);
    // the pairs issue 53 removed (helpers moved to kit/, events.ts into call/) stay removed, listed or not
    const now = twoWay(all, folderOf);
    // and flow actions reach twiml/ through services.twiml only
    for (const gone of ['(root) <-> inbound', '(root) <-> registrar', '(root) <-> outreg', 'inbound <-> registrar', 'flow <-> twiml']) expect(now).not.to.include(gone);
    expect(now.length, now.join('\n')).to.be.at.most(23);
  });

  it('every listed back edge still closes a pair (delete the entry when it does not)', () => {
    const pairs = new Set(twoWay(all, folderOf));
    const unused = [...BACK_EDGES, ...ROOM_BACK_EDGES].filter((x) => {
      const used = all.filter(([f, t]) => x.from.test(f) && x.to.test(t));
      const room = x.from.source.startsWith('^media-app') ? folderOf : topOf;
      return !used.some(([f, t]) => {
        const [a, b] = [room(f)!, room(t)!].sort();
        return room === topOf ? twoWay(all, topOf).includes(`${a} <-> ${b}`) : pairs.has(`${a} <-> ${b}`);
      });
    });
    expect(unused.map((x) => x.why)).to.deep.equal([]);
  });
});
