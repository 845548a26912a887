// The files the architecture tests read: one walk of the working tree (sourceFiles) and one list of what
// git tracks (trackedFiles). Each test narrows them with a filter of its own where its rule says so.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The repository's root. */
export const ROOT = path.resolve(__dirname, '../..');

/** TypeScript sources: .ts, .tsx, .mts and .cts, declaration files included (isDeclaration tells them). */
const TYPESCRIPT = /\.(ts|tsx|mts|cts)$/;
/** Folders no walk enters: packages, and native build output (a worktree links it to the main checkout's). */
const NOT_WALKED = new Set(['node_modules', 'build']);
/** Tracked paths that are not ours: generated output, packages, vendored code. */
const NOT_OURS = /^(dist|node_modules|vendor)\/|\/vendor\//;

/** The TypeScript files under `dir` (root-relative paths, depth first in directory order); a folder that is not there has none. */
export function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(path.join(ROOT, dir))) return [];
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return NOT_WALKED.has(e.name) ? [] : sourceFiles(rel);
    return TYPESCRIPT.test(e.name) ? [rel] : [];
  });
}

/** A TypeScript declaration file (types only, no code). */
export const isDeclaration = (file: string): boolean => file.endsWith('.d.ts');

/** The files git tracks whose name `source` matches, but for those not ours, that are in the working tree. */
export function trackedFiles(source: RegExp): string[] {
  return execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => source.test(f) && !NOT_OURS.test(f) && fs.existsSync(path.join(ROOT, f)));
}
