/**
 * Rewrites coverage.json: every reference operation that scenarios.ts does not cover keeps its
 * listed kind and reason; one newly uncovered gets a first entry (missing when no route serves it,
 * else not-covered) to be edited by hand. Covered operations leave the list.
 *
 *   npx tsx test/conformance/coverage-update.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadRoutes } from '../../control-api/routes/index';
import { openApiPath } from '../../control-api/openapi';
import { Reference } from './reference';
import { scenarios } from './scenarios';

interface Listed {
  kind: string;
  reason: string;
}
const file = path.join(__dirname, 'coverage.json');
const before = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, Listed>;
const shape = (p: string) => p.replace(/\{[^}]+\}/g, '{}');
const mounted = new Set(loadRoutes().map((r) => `${r.method} ${shape(openApiPath(r.path))}`));
const covered = new Set(Object.values(scenarios).flatMap((steps) => steps.filter((s) => !s.again).map((s) => s.op)));
const out: Record<string, Listed> = {};
for (const op of new Reference().operations) {
  if (covered.has(op.key)) continue;
  out[op.key] =
    before[op.key] ??
    (mounted.has(`${op.method} ${shape(op.path)}`) ? { kind: 'not-covered', reason: 'served, not yet in the conformance scenarios' } : { kind: 'missing', reason: 'no route serves this operation' });
}
fs.writeFileSync(file, JSON.stringify(out, null, 1) + '\n');
const kinds = Object.values(out).reduce<Record<string, number>>((a, v) => ({ ...a, [v.kind]: (a[v.kind] ?? 0) + 1 }), {});
console.log(`covered ${covered.size}, listed ${Object.keys(out).length}`, kinds);
