/**
 * Generates the TypeScript types of the reference API (`reference/voipbin-openapi.json` in this
 * repository; provenance and licence beside it) with openapi-typescript into
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

/** The reference OpenAPI document, kept in the repository (`reference/PROVENANCE.md`). */
export const REFERENCE_DOCUMENT = path.join(ROOT, 'reference', 'voipbin-openapi.json');

function main(): void {
  const doc = REFERENCE_DOCUMENT;
  if (!fs.existsSync(doc)) throw new Error(`reference OpenAPI document missing: ${path.relative(ROOT, doc)}`);
  if (fs.existsSync(REFERENCE_TYPES) && fs.statSync(REFERENCE_TYPES).mtimeMs >= fs.statSync(doc).mtimeMs) return;
  fs.mkdirSync(path.dirname(REFERENCE_TYPES), { recursive: true });
  execFileSync(path.join(ROOT, 'node_modules', '.bin', 'openapi-typescript'), [doc, '-o', REFERENCE_TYPES], { stdio: 'ignore' });
  console.log(`[reference-client] ${path.relative(ROOT, REFERENCE_TYPES)}`);
}

if (require.main === module) main();
