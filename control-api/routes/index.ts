/**
 * Every route of the versioned API: each `routes/<group>.ts` exports `routes` (an array of
 * defineRoute results) and is picked up here in file-name order, so new groups never edit a shared
 * list. Paths with a literal segment must not be shadowed by a `:param` route of another file.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AnyRoute } from '../route';

let cached: AnyRoute[] | null = null;

export function loadRoutes(): AnyRoute[] {
  if (cached) return cached;
  const files = fs
    .readdirSync(__dirname)
    .filter((f) => /\.(ts|js)$/.test(f) && !/\.d\.ts$/.test(f) && !/^index\./.test(f))
    .sort();
  const all: AnyRoute[] = [];
  for (const f of files) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require(path.join(__dirname, f)) as { routes?: AnyRoute[] };
    if (Array.isArray(mod.routes)) all.push(...mod.routes);
  }
  cached = all;
  return all;
}
