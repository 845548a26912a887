/**
 * Generates the TypeScript types of the reference API (`shared/reference/voipbin-openapi.json`, found in
 * the nearest ancestor folder, or $REFERENCE_OPENAPI) with openapi-typescript into
 * `dist/reference-api/paths.d.ts`, for the typed client of the conformance suite
 * (`test/conformance/typed/`). Generated at set-up, never committed; skipped when up to date.
 *
 *   npx tsx scripts/reference-client.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

const ROOT = path.resolve(__dirname, '..');
export const REFERENCE_TYPES = path.join(ROOT, 'dist', 'reference-api', 'paths.d.ts');

export function referenceDocument(start = ROOT): string | null {
  if (process.env.REFERENCE_OPENAPI) return process.env.REFERENCE_OPENAPI;
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'shared', 'reference', 'voipbin-openapi.json');
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

function main(): void {
  const doc = referenceDocument();
  if (!doc) {
    console.log('[reference-client] no reference document: skipped');
    return;
  }
  if (fs.existsSync(REFERENCE_TYPES) && fs.statSync(REFERENCE_TYPES).mtimeMs >= fs.statSync(doc).mtimeMs) return;
  fs.mkdirSync(path.dirname(REFERENCE_TYPES), { recursive: true });
  execFileSync(path.join(ROOT, 'node_modules', '.bin', 'openapi-typescript'), [doc, '-o', REFERENCE_TYPES], { stdio: 'ignore' });
  console.log(`[reference-client] ${path.relative(ROOT, REFERENCE_TYPES)}`);
}

if (require.main === module) main();
