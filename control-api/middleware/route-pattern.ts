import type { Request } from 'express';

/**
 * The route pattern a request matched (`/v1.0/calls/:id`), never its path (ids) or query (tokens);
 * null when no route matched. The metrics' `route` label and the request span's name (trace.ts).
 */
export function routePattern(req: Request): string | null {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' && path ? `${req.baseUrl}${path === '/' ? '' : path}` || '/' : null;
}
