// Imports point one way (docs/architecture.md "Seams and import rules"). Every top-level folder that
// holds TypeScript is a room with declared rules:
//   core          what control-api and media-app share: imports none of the other rooms (media-engine
//                 imports core/net and core/audio, so core importing media-engine would close a cycle)
//   control-api,  never import each other; reach media-engine only through its index; no other room
//   media-app
//   media-engine  nothing of the platform but the pure leaves core/net/, core/audio/ (codec names,
//                 G.711 tables, the RTP capture record: formats core and the engine share) and core/files/
//                 (a directory of this user's alone)
//   sip-server    its configuration (sip-config) and the few leaves of core it shares with media-app
//                 (core/net/, core/sip/, core/config, core/registrar/bindings, core/metrics-server, core/tracing);
//                 nothing else
//   sip-config    core/config and the Origin parser core/sip/ws-origin (shared with sip-server)
//   esl           FreeSWITCH's event socket over the media engine (esl/README.md): the socket guard
//                 (core/net), the logger, the media timeout's INVITE header (shared with media-app's
//                 fsmrf backend), and media-engine through its index; no room imports esl
//   evals         the voice agent evals worker (evals/README.md): simulated callers that dial the platform
//                 through its SIP edge like any phone, so it imports core (the run's records, the
//                 scenario schema, G.711) and the platform's recognisers, media-engine/stt (the caller hears
//                 the agent as the platform would; a recogniser is no path to the call), nothing else; no
//                 room imports evals
//   web           browser code, bundled on its own: nothing outside web/ but the wire shapes it shares with
//                 the server (WEB_SHAPES), by `import type`/`export type` only (erased from the bundle); those
//                 import nothing of the platform but zod and, by type, another shape
//   types         declarations of npm packages: nothing of the platform
//   testkit       harness code tests and benchmarks share (testkit/README.md): the platform's rooms and
//                 scripts/build-web; never test/ or the rest of scripts/
//   scripts, test may import anything but test/ (only test imports test/); no room imports them
//                 (test may import scripts)
// Of the platform's rooms only sip-server imports sip-config, none imports sip-server, esl, evals or web (scripts, test
// and testkit may), and nothing but scripts and test imports testkit. deploy/, reference/, freeswitch/ and docs/ hold no TypeScript (the scan checks that no unlisted folder does).
// Every import, export-from, require, import() and `declare module` augmentation is checked.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT, sourceFiles } from './source-files';

const ROOMS = ['core', 'control-api', 'media-app', 'media-engine', 'sip-server', 'sip-config', 'esl', 'evals', 'web', 'types', 'scripts', 'test', 'testkit'] as const;
type Room = (typeof ROOMS)[number];
/** Top-level folders that are not rooms: no source of the platform (generated output, packages, documents, configs). */
const NOT_ROOMS = ['node_modules', 'dist', 'docs', 'deploy', 'reference', 'freeswitch'];

/** The wire shapes the console shares with the server, each importing nothing but zod and (by type) another shape. */
export const WEB_SHAPES: readonly string[] = ['core/calls/dashboard-schema', 'core/evals/schema', 'core/evals/run-shape'];

/** What each room may import of the other rooms (a path, or a folder and everything under it); 'any' for scripts and test. */
const MAY_IMPORT: Record<Room, readonly string[] | 'any'> = {
  core: [],
  'control-api': ['core', 'media-engine/index'],
  'media-app': ['core', 'media-engine/index'],
  'media-engine': ['core/net', 'core/audio', 'core/files'],
  'sip-server': ['sip-config', 'core/net', 'core/sip', 'core/config', 'core/registrar/bindings', 'core/metrics-server', 'core/tracing'],
  'sip-config': ['core/config', 'core/sip/ws-origin'],
  // core/quality/emodel: the R → MOS mapping FreeSWITCH's do_mos writes out (a leaf: it imports nothing)
  // core/data-dirs: the recordings and switch-prompts directories under DATA_DIR, shared with media-app (a leaf)
  esl: ['core/net', 'core/logger', 'core/sip/media-timeout-header', 'core/quality/emodel', 'core/data-dirs', 'media-engine/index'],
  evals: ['core', 'media-engine/stt'],
  web: WEB_SHAPES,
  types: [],
  scripts: 'any',
  test: 'any',
  testkit: ['core', 'control-api', 'media-app', 'media-engine', 'sip-server', 'sip-config', 'esl', 'evals', 'scripts/build-web'],
};

/** Exceptions to the rules, each with its reason; every entry must still match an import (else delete it). */
export const ALLOWED: readonly { from: RegExp; to: RegExp; why: string }[] = [];

function roomOf(rel: string): Room | null {
  const top = rel.split('/')[0];
  return (ROOMS as readonly string[]).includes(top) ? (top as Room) : null;
}

/** `to` is `p` or lies under it ('media-engine' stands for its index). */
function under(to: string, p: string): boolean {
  const t = to === 'media-engine' ? 'media-engine/index' : to;
  return t === p || t.startsWith(`${p}/`);
}

/** Why `from` (a file) may not import `to` (a path without extension, both relative to the root), or null. */
export function forbidden(from: string, to: string): string | null {
  const a = roomOf(from);
  const b = roomOf(to);
  if (!a || !b || a === b) return null;
  const may = MAY_IMPORT[a];
  if (may === 'any') {
    if (b === 'test' && a !== 'test') return `no room imports test/ (${a} does)`;
    return null;
  }
  if (may.some((p) => under(to, p))) return null;
  // the reason, from the most specific rule that refuses it
  if (b === 'test' || b === 'scripts') return `no room imports ${b}/ (${a} does)`;
  if (b === 'testkit') return `only test and scripts import testkit/ (not ${a})`;
  if (a === 'core') return `core must not import ${b}`;
  if ((a === 'control-api' && b === 'media-app') || (a === 'media-app' && b === 'control-api')) return `${a} and ${b} never import each other`;
  if (a === 'media-engine') return `media-engine imports no platform code but core/net/, core/audio/ and core/files/ (not ${b})`;
  if (b === 'media-engine' && may.includes('media-engine/index')) return `${a} uses media-engine only through media-engine/index.ts`;
  if (a === 'web') return `web is browser code and imports nothing outside web/ (not ${b})`;
  if (a === 'types') return `types/ declares npm packages and imports nothing of the platform (not ${b})`;
  if (b === 'sip-config') return `only sip-server imports sip-config (not ${a})`;
  if (b === 'sip-server' || b === 'web' || b === 'esl' || b === 'evals') return `${a} must not import ${b}`;
  return `${a} imports only ${may.join(', ')} of the other rooms (not ${to})`;
}

/** The ALLOWED entry that excuses this import, if any. */
export function allowedBy(from: string, to: string): (typeof ALLOWED)[number] | undefined {
  return ALLOWED.find((x) => x.from.test(from) && x.to.test(to));
}

/** Every module specifier a file names (imports, re-exports, require, import(), import types, augmentations). */
function specifiers(text: string): string[] {
  const info = ts.preProcessFile(text, true, true);
  const names = info.importedFiles.map((f) => f.fileName);
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) names.push(m[1]);
  for (const m of text.matchAll(/\bdeclare\s+module\s+['"]([^'"]+)['"]/g)) names.push(m[1]);
  return [...new Set(names)];
}

/** The specifiers a file names only in `import type` / `export type` declarations (erased by esbuild and tsc). */
function typeOnlySpecifiers(file: string, text: string): Set<string> {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const typeOnly = new Set<string>();
  const value = new Set<string>();
  for (const st of sf.statements) {
    if ((ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) && st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)) {
      const only = ts.isImportDeclaration(st) ? st.importClause?.isTypeOnly === true : st.isTypeOnly;
      (only ? typeOnly : value).add(st.moduleSpecifier.text);
    }
  }
  for (const m of text.matchAll(/\b(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/g)) value.add(m[1]);
  return new Set([...typeOnly].filter((x) => !value.has(x)));
}

/** The relative imports of one file as root-relative paths, and the ones against the rules (ALLOWED applied). */
export function check(file: string, text: string): { targets: string[]; violations: string[] } {
  const targets: string[] = [];
  const violations: string[] = [];
  const typeOnly = roomOf(file) === 'web' ? typeOnlySpecifiers(file, text) : new Set<string>();
  for (const spec of specifiers(text)) {
    if (!spec.startsWith('.')) continue; // packages and node: builtins
    const to = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.(js|ts|tsx)$/, '');
    targets.push(to);
    const why = forbidden(file, to);
    if (why && !allowedBy(file, to)) violations.push(`${file} → ${to}: ${why}`);
    else if (!why && roomOf(file) === 'web' && roomOf(to) !== 'web' && !typeOnly.has(spec))
      violations.push(`${file} → ${to}: web takes a shared shape by \`import type\` only (nothing outside web/ in the bundle)`);
  }
  return { targets, violations };
}

function scan(): { edges: number; perRoom: Map<Room, number>; violations: string[]; unused: string[] } {
  let edges = 0;
  const perRoom = new Map<Room, number>();
  const violations: string[] = [];
  const used = new Set<(typeof ALLOWED)[number]>();
  for (const room of ROOMS) {
    const files = sourceFiles(room);
    perRoom.set(room, files.length);
    for (const file of files) {
      const r = check(file, fs.readFileSync(path.join(ROOT, file), 'utf8'));
      edges += r.targets.length;
      violations.push(...r.violations);
      for (const to of r.targets) {
        const entry = forbidden(file, to) ? allowedBy(file, to) : undefined;
        if (entry) used.add(entry);
      }
    }
  }
  const unused = ALLOWED.filter((x) => !used.has(x)).map((x) => `${x.from} → ${x.to}`);
  return { edges, perRoom, violations, unused };
}

describe('architecture: import directions', () => {
  it('the rule refuses each forbidden direction and lets the allowed ones through', () => {
    expect(forbidden('core/ai/summary.ts', 'media-engine/stt')).to.match(/core must not import media-engine/);
    expect(forbidden('core/calls/codecs.ts', 'media-engine')).to.match(/core must not import media-engine/);
    expect(forbidden('core/workspace/cases.ts', 'media-app/flow/services')).to.match(/core must not import media-app/);
    expect(forbidden('core/x.ts', 'control-api/route')).to.match(/core must not import control-api/);
    expect(forbidden('control-api/routes/a.ts', 'media-app/flow/services')).to.match(/never import each other/);
    expect(forbidden('media-app/a.ts', 'control-api/context')).to.match(/never import each other/);
    expect(forbidden('media-app/ai/voice.ts', 'media-engine/dsp/vad')).to.match(/only through media-engine\/index/);
    expect(forbidden('control-api/routes/a.ts', 'media-engine/tts/espeak')).to.match(/only through media-engine\/index/);
    expect(forbidden('media-engine/sources/prepare.ts', 'core/db/knex')).to.match(/core\/net/);
    expect(forbidden('media-engine/sources/prepare.ts', 'core/network')).to.match(/core\/net/);
    expect(forbidden('media-engine/a.ts', 'media-app/x')).to.match(/no platform code/);
    for (const ok of [
      ['media-app/ai/voice.ts', 'media-engine'],
      ['media-app/ai/voice.ts', 'media-engine/index'],
      ['control-api/routes/a.ts', 'core/errors'],
      ['media-app/a.ts', 'core/errors'],
      ['media-engine/sources/prepare.ts', 'core/net/policy'],
      ['media-engine/media-server.ts', 'core/net'],
      ['media-engine/worker/rtp-session.ts', 'core/audio/g711'],
      ['media-engine/endpoint.ts', 'media-engine/worker/leg'],
      ['core/ai/summary.ts', 'core/llm/client'],
    ])
      expect(forbidden(ok[0], ok[1]), ok.join(' → ')).to.equal(null);
  });

  it('the rules of sip-server, sip-config, web, types, scripts, test and testkit refuse what they must', () => {
    const refused: [string, string, RegExp][] = [
      ['sip-server/stack.ts', 'media-app/app', /imports only sip-config, core\/net/],
      ['sip-server/drachtio/engine.ts', 'control-api/route', /not control-api\/route/],
      ['sip-server/transport/udp.ts', 'media-engine', /not media-engine\)/],
      ['sip-server/capture/capture.ts', 'core/db/knex', /not core\/db\/knex/],
      ['sip-server/flows.ts', 'core/registrar/lockout', /not core\/registrar\/lockout/],
      ['sip-config/index.ts', 'sip-server/stack', /sip-config must not import sip-server/],
      ['sip-config/index.ts', 'core/db/knex', /imports only core\/config/],
      ['sip-config/index.ts', 'sip-server/transport/ws', /sip-config must not import sip-server/],
      ['sip-config/index.ts', 'core/sip/capture-store', /not core\/sip\/capture-store/],
      ['media-app/app.ts', 'sip-server/message', /media-app must not import sip-server/],
      ['control-api/app.ts', 'sip-config', /only sip-server imports sip-config/],
      ['core/config.ts', 'sip-config', /core must not import sip-config/],
      ['media-engine/index.ts', 'sip-server/message', /no platform code/],
      ['web/phone/main.ts', 'core/errors', /web is browser code/],
      ['web/console/api.ts', 'control-api/route', /web is browser code/],
      ['control-api/console/serve.ts', 'web/console/main', /control-api must not import web/],
      ['types/rtpengine-client.d.ts', 'core/net', /types\/ declares npm packages/],
      ['media-app/app.ts', 'scripts/rtpengine', /no room imports scripts\//],
      ['sip-server/main.ts', 'scripts/start', /no room imports scripts\//],
      ['core/db/knex.ts', 'test/support/db', /no room imports test\//],
      ['control-api/app.ts', 'test/support/api', /no room imports test\//],
      ['scripts/start.ts', 'test/support/ports', /no room imports test\//],
      ['scripts/bench/ai/run.ts', 'test/support/hooks', /no room imports test\/ \(scripts does\)/],
      ['scripts/soak/run.ts', 'test/media-app/inbound.test', /no room imports test\//],
      ['testkit/db.ts', 'test/support/hooks', /no room imports test\/ \(testkit does\)/],
      ['testkit/media-app/harness.ts', 'scripts/bench/report', /no room imports scripts\//],
      ['media-app/app.ts', 'testkit/ports', /only test and scripts import testkit\//],
      ['core/db/knex.ts', 'testkit/db', /only test and scripts import testkit\/ \(not core\)/],
      ['control-api/app.ts', 'testkit/api', /only test and scripts import testkit\//],
      ['esl/server.ts', 'media-engine/worker/leg', /esl uses media-engine only through media-engine\/index/],
      ['esl/server.ts', 'media-app/app', /not media-app\/app/],
      ['media-app/app.ts', 'esl/server', /media-app must not import esl/],
      ['core/net/index.ts', 'esl/wire', /core must not import esl/],
      ['evals/call.ts', 'media-app/call/session', /evals imports only core/],
      ['evals/rtp-phone.ts', 'media-engine/worker/rtp-session', /evals imports only core/],
      ['control-api/routes/eval-runs.ts', 'evals/runner', /control-api must not import evals/],
    ];
    for (const [from, to, why] of refused) expect(forbidden(from, to), `${from} → ${to}`).to.match(why);
    for (const ok of [
      ['sip-server/main.ts', 'sip-config'],
      ['sip-server/transport/udp.ts', 'core/net/ip-lookup'],
      ['sip-server/capture/capture.ts', 'core/sip/capture-store'],
      ['sip-server/capture/index.ts', 'core/config'],
      ['sip-server/flows.ts', 'core/registrar/bindings'],
      ['sip-config/index.ts', 'core/config'],
      ['sip-config/index.ts', 'core/sip/ws-origin'],
      ['sip-server/transport/index.ts', 'core/sip/ws-origin'],
      ['web/console/main.tsx', 'web/phone/sip'],
      ['scripts/bench/media/alloc.ts', 'media-engine/worker/leg'],
      ['scripts/bench/events/run.ts', 'control-api/ws'],
      ['scripts/flow-simulate.ts', 'media-app/flow/simulator/simulate'],
      ['scripts/bench/sip-parser/parse-bench.ts', 'sip-server/message'],
      ['test/webphone/harness.ts', 'scripts/build-web'],
      ['test/media-app/harness.ts', 'sip-server/stack'],
      ['test/core/x.test.ts', 'media-engine/worker/leg'],
      ['test/sip-server/config.test.ts', 'sip-config'],
      ['scripts/bench/calls/run.ts', 'testkit/media-app/harness'],
      ['scripts/soak/faults.ts', 'testkit/reliability/node-fault'],
      ['test/media-app/inbound.test.ts', 'testkit/media-app/harness'],
      ['testkit/webphone/harness.ts', 'scripts/build-web'],
      ['testkit/media-app/harness.ts', 'sip-server/stack'],
      ['testkit/api.ts', 'control-api/app'],
      ['testkit/scale/cluster.ts', 'media-app/main'],
      ['esl/server.ts', 'core/net/socket-guard'],
      ['esl/main.ts', 'core/logger'],
      ['esl/channel.ts', 'media-engine'],
      ['test/esl/wire.test.ts', 'esl/wire'],
      ['evals/observe.ts', 'core/repos/eval-reach'],
      ['testkit/evals/x.ts', 'evals/worker'],
    ])
      expect(forbidden(ok[0], ok[1]), ok.join(' → ')).to.equal(null);
  });

  it('ALLOWED is empty: nothing is excused', () => {
    expect(ALLOWED).to.deep.equal([]);
    expect(allowedBy('scripts/bench/ai/run.ts', 'test/support/db')).to.equal(undefined);
    expect(allowedBy('scripts/soak/run.ts', 'test/media-app/harness')).to.equal(undefined);
    expect(allowedBy('scripts/start.ts', 'test/support/ports')).to.equal(undefined);
    expect(allowedBy('media-app/app.ts', 'test/support/db')).to.equal(undefined);
    expect(allowedBy('sip-config/index.ts', 'sip-server/transport/ws-origin')).to.equal(undefined);
    expect(allowedBy('sip-config/index.ts', 'sip-server/stack')).to.equal(undefined);
  });

  it('a forbidden import written in a file is reported, whatever its form', () => {
    const forms = [
      "import { SipStack } from '../media-app/app';",
      "export { x } from '../media-app/app';",
      "const a = require('../media-app/app');",
      "type T = import('../media-app/app').T;",
      "declare module '../media-app/app' { interface X { y: 1 } }",
    ];
    for (const text of forms) {
      expect(check('sip-server/stack.ts', text).violations, text).to.have.length(1);
    }
    expect(check('web/phone/main.ts', "import { ApiError } from '../../core/errors';").violations[0]).to.match(/web\/phone\/main\.ts → core\/errors: web is browser code/);
    expect(check('scripts/bench/x/run.ts', "import { testDb } from '../../../test/support/hooks';").violations[0]).to.match(
      /scripts\/bench\/x\/run\.ts → test\/support\/hooks: no room imports test\//,
    );
    expect(check('scripts/bench/x/run.ts', "import { testDb } from '../../../testkit/db';").violations).to.deep.equal([]);
    expect(check('test/x/a.test.ts', "import { testDb } from '../../testkit/db';").violations).to.deep.equal([]);
    expect(check('media-app/x.ts', "import { freePort } from '../testkit/ports';").violations).to.have.length(1);
    expect(check('sip-server/stack.ts', "import pino from 'pino';\nimport { loadSipConfig } from '../sip-config';").violations).to.deep.equal([]);
  });

  it('web takes the shapes it shares with the server by type only, and each shape imports nothing of the platform', () => {
    const shape = "'../../core/calls/dashboard-schema'";
    expect(check('web/console/api.ts', `import type { Dashboard } from ${shape};`).violations).to.deep.equal([]);
    expect(check('web/console/api.ts', `export type { Dashboard } from ${shape};`).violations).to.deep.equal([]);
    for (const text of [
      `import { dashboardResponse } from ${shape};`,
      `import { type Dashboard } from ${shape};`,
      `export { dashboardResponse } from ${shape};`,
      `import type { D } from ${shape};\nconst x = require(${shape});`,
    ])
      expect(check('web/console/api.ts', text).violations, text).to.have.length(1);
    expect(check('web/console/api.ts', "import type { Call } from '../../core/calls/repo';").violations[0]).to.match(/web is browser code/);
    for (const file of WEB_SHAPES) {
      const text = fs.readFileSync(path.join(ROOT, `${file}.ts`), 'utf8');
      const shapes = [...typeOnlySpecifiers(file, text)].filter((s) => WEB_SHAPES.includes(path.posix.join(path.posix.dirname(file), s)));
      expect(
        specifiers(text).filter((s) => !shapes.includes(s)),
        file,
      ).to.deep.equal(['zod']);
    }
  });

  it('every top-level folder with TypeScript is a room, and every room has source', () => {
    const tops = fs
      .readdirSync(ROOT, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => e.name);
    const unlisted = tops.filter((d) => !(ROOMS as readonly string[]).includes(d) && !NOT_ROOMS.includes(d));
    expect(unlisted, 'top-level folders that are neither rooms nor listed in NOT_ROOMS').to.deep.equal([]);
    for (const d of NOT_ROOMS.filter((n) => n !== 'node_modules' && n !== 'dist' && tops.includes(n))) {
      expect(sourceFiles(d), `${d}/ holds TypeScript: make it a room`).to.deep.equal([]);
    }
  });

  it('no file of any room imports against the rule, and every ALLOWED entry is still needed', () => {
    const { edges, perRoom, violations, unused } = scan();
    expect(edges, 'the scan found the imports').to.be.above(4000);
    for (const room of ROOMS) expect(perRoom.get(room), `${room} has source files`).to.be.above(0);
    expect(violations, violations.join('\n')).to.deep.equal([]);
    expect(unused, 'ALLOWED entries that no import needs any more').to.deep.equal([]);
  });
});
