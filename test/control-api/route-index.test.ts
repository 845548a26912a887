/**
 * The explicit route index (control-api/routes/index.ts) serves exactly the groups found in
 * control-api/routes/, in file-name order: a group file left out of the index, or an index line
 * for a file that is gone, fails here, and so does any change in the served OpenAPI operations.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { loadRoutes } from '../../control-api/routes';
import { openApiPath } from '../../control-api/openapi';
import type { AnyRoute } from '../../control-api/route';
import { buildTestApp, type TestApp } from '../../testkit/api';

const ROUTES_DIR = path.join(__dirname, '../../control-api/routes');

/** What a directory scan finds: every file exporting `routes`, in file-name order. */
function scannedRoutes(): AnyRoute[] {
  const files = fs
    .readdirSync(ROUTES_DIR)
    .filter((f) => /\.ts$/.test(f) && !/\.d\.ts$/.test(f) && f !== 'index.ts')
    .sort();
  const all: AnyRoute[] = [];
  for (const f of files) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- every route file in a folder, by computed path, synchronously
    const mod = require(path.join(ROUTES_DIR, f)) as { routes?: AnyRoute[] };
    if (Array.isArray(mod.routes)) all.push(...mod.routes);
  }
  return all;
}

const key = (r: AnyRoute) => `${r.method.toUpperCase()} ${r.path}`;

function operationsOf(doc: { paths?: Record<string, Record<string, unknown>> }): string[] {
  const ops: string[] = [];
  for (const [p, item] of Object.entries(doc.paths ?? {})) for (const m of Object.keys(item)) ops.push(`${m.toUpperCase()} ${p}`);
  return ops.sort();
}

describe('control-api route index', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(async () => t.close());

  it('lists every route group of control-api/routes, in file-name order', () => {
    const listed = loadRoutes().map(key);
    const scanned = scannedRoutes().map(key);
    expect(listed.length).to.be.greaterThan(400);
    expect(listed).to.deep.equal(scanned);
  });

  it('serves the same OpenAPI operations as the scanned route files', async () => {
    const res = await request(t.app).get('/v1.0/openapi.json').expect(200);
    const served = operationsOf(res.body as { paths?: Record<string, Record<string, unknown>> });
    const scanned = new Set(scannedRoutes().map((r) => `${r.method.toUpperCase()} ${openApiPath(r.path)}`));
    expect(served).to.deep.equal([...scanned].sort());
  });
});
