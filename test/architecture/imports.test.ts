// Imports point one way (docs/architecture: rooms). core/ is what control-api and media-app share:
// it imports neither of them nor media-engine's internals; control-api and media-app never import
// each other; both reach media-engine only through its index; media-engine imports nothing of the
// platform but the pure leaf core/net/. Every import, export-from, require, import() and
// `declare module` augmentation of the source tree is checked.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const ROOMS = ['core', 'control-api', 'media-app', 'media-engine'] as const;
type Room = (typeof ROOMS)[number];

/** Exceptions, each with its reason (none today). */
const ALLOWED: { from: string; to: string; why: string }[] = [];

function roomOf(rel: string): Room | null {
  const top = rel.split('/')[0];
  return (ROOMS as readonly string[]).includes(top) ? (top as Room) : null;
}

/** 'media-engine' and 'media-engine/index' are the engine's public face; anything deeper is internal. */
function isEngineIndex(rel: string): boolean {
  return rel === 'media-engine' || rel === 'media-engine/index';
}

/** Why `from` (a file) may not import `to` (a path without extension, both relative to the root), or null. */
export function forbidden(from: string, to: string): string | null {
  const a = roomOf(from);
  const b = roomOf(to);
  if (!a || !b || a === b) return null;
  if (a === 'core') {
    if (b === 'media-engine' && isEngineIndex(to)) return null;
    return `core must not import ${b === 'media-engine' ? 'media-engine internals' : b}`;
  }
  if ((a === 'control-api' && b === 'media-app') || (a === 'media-app' && b === 'control-api')) return `${a} and ${b} never import each other`;
  if (b === 'media-engine' && !isEngineIndex(to)) return `${a} uses media-engine only through media-engine/index.ts`;
  if (a === 'media-engine') {
    if (b === 'core' && (to === 'core/net' || to.startsWith('core/net/'))) return null;
    return `media-engine imports no platform code but core/net/ (not ${b})`;
  }
  return null;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...sourceFiles(rel));
    else if (/\.(ts|tsx|mts|cts)$/.test(e.name)) out.push(rel);
  }
  return out;
}

/** Every module specifier a file names (imports, re-exports, require, import(), import types, augmentations). */
function specifiers(text: string): string[] {
  const info = ts.preProcessFile(text, true, true);
  const names = info.importedFiles.map((f) => f.fileName);
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) names.push(m[1]);
  for (const m of text.matchAll(/\bdeclare\s+module\s+['"]([^'"]+)['"]/g)) names.push(m[1]);
  return [...new Set(names)];
}

function scan(): { edges: number; violations: string[] } {
  let edges = 0;
  const violations: string[] = [];
  for (const room of ROOMS) {
    for (const file of sourceFiles(room)) {
      for (const spec of specifiers(fs.readFileSync(path.join(ROOT, file), 'utf8'))) {
        if (!spec.startsWith('.')) continue; // packages and node: builtins
        const to = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.(js|ts)$/, '');
        edges++;
        const why = forbidden(file, to);
        if (why && !ALLOWED.some((x) => x.from === file && x.to === to)) violations.push(`${file} → ${to}: ${why}`);
      }
    }
  }
  return { edges, violations };
}

describe('architecture: import directions', () => {
  it('the rule refuses each forbidden direction and lets the allowed ones through', () => {
    expect(forbidden('core/ai/summary.ts', 'media-engine/stt')).to.match(/media-engine internals/);
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
      ['media-engine/endpoint.ts', 'media-engine/worker/leg'],
      ['core/ai/summary.ts', 'core/llm/client'],
    ]) expect(forbidden(ok[0], ok[1]), ok.join(' → ')).to.equal(null);
  });

  it('no file of core, control-api, media-app or media-engine imports against the rule', () => {
    const { edges, violations } = scan();
    expect(edges, 'the scan found the imports').to.be.above(1000);
    expect(violations, violations.join('\n')).to.deep.equal([]);
  });
});
