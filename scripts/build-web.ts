/**
 * Builds the browser apps under `web/<app>/` (the browser phone, the console) into `dist/web/<app>/`
 * with esbuild, from npm packages only (no CDN at run time). Each app has an entry `main.ts` or
 * `main.tsx`; every other file of the app's `public/` folder (index.html, CSS, icons) is copied as is.
 *
 *   npx tsx scripts/build-web.ts            # every app
 *   npx tsx scripts/build-web.ts phone      # one app
 *
 * Set-up runs it; suites that serve an app call `buildWebApp(name)` first (it takes well under a second).
 * Each output file is written aside and renamed over the old one, so a server reading the folder while
 * another process rebuilds it (the parallel test shards do) never sees a file cut in the middle.
 */
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const ROOT = path.resolve(__dirname, '..');
export const WEB_SRC = path.join(ROOT, 'web');
export const WEB_DIST = path.join(ROOT, 'dist', 'web');

export function webApps(): string[] {
  if (!fs.existsSync(WEB_SRC)) return [];
  return fs
    .readdirSync(WEB_SRC, { withFileTypes: true })
    .filter((d) => d.isDirectory() && entryOf(d.name) !== null)
    .map((d) => d.name)
    .sort();
}

function entryOf(app: string): string | null {
  for (const name of ['main.tsx', 'main.ts']) {
    const p = path.join(WEB_SRC, app, name);
    if (fs.existsSync(p)) return p;
  }
  return null;
}

function copyDir(from: string, to: string): void {
  if (!fs.existsSync(from)) return;
  fs.mkdirSync(to, { recursive: true });
  for (const e of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, e.name);
    const dst = path.join(to, e.name);
    if (e.isDirectory()) copyDir(src, dst);
    else writeAtomic(dst, fs.readFileSync(src));
  }
}

/** Writes `file` whole: to a temporary name beside it, then renamed over it. */
function writeAtomic(file: string, contents: Uint8Array): void {
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  fs.writeFileSync(tmp, contents);
  fs.renameSync(tmp, file);
}

/** Builds one app; returns the folder it was written to. */
export async function buildWebApp(app: string): Promise<string> {
  const entry = entryOf(app);
  if (!entry) throw new Error(`web app ${app}: no web/${app}/main.ts(x)`);
  const out = path.join(WEB_DIST, app);
  fs.mkdirSync(out, { recursive: true });
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox110', 'safari16'],
    outfile: path.join(out, 'main.js'),
    sourcemap: true,
    minify: process.env.NODE_ENV === 'production',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'silent',
    legalComments: 'linked',
    write: false,
  });
  for (const f of result.outputFiles) writeAtomic(f.path, f.contents);
  copyDir(path.join(WEB_SRC, app, 'public'), out);
  return out;
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const apps = wanted.length ? wanted : webApps();
  for (const app of apps) {
    const out = await buildWebApp(app);
    console.log(`[build-web] ${app} -> ${path.relative(ROOT, out)}`);
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
