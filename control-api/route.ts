/**
 * The route-definition helper every resource group uses. One object per endpoint carries the
 * method, path, permission, zod schemas and handler; from it come the request validation (here)
 * and the OpenAPI document (openapi.ts). Put a group's routes in `control-api/routes/<group>.ts`
 * as `export const routes = [defineRoute({...}), ...]`; list the group in routes/index.ts.
 */
import { Router as ExpressRouter, type Request, type Response, type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import type { AppContext, AuthContext } from './context';
import { ApiError, directAccessNotSupported, permissionDenied } from '../core/errors';
import { hasLevel, type PermissionLevel } from '../core/permissions';
import { parsePageQuery, type PageParams } from '../core/pagination';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface HandlerArgs<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Present on every authenticated route. */
  auth: AuthContext;
  /** page_size / page_token, parsed, when the route is `paginated`. */
  page: PageParams;
  ctx: AppContext;
  req: Request;
  res: Response;
}

export interface RouteDef<P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType> {
  method: Method;
  /** Express path relative to /v1.0, e.g. `/accesskeys/:id`. */
  path: string;
  /** OpenAPI tag (the resource group) and one-line summary. */
  tag: string;
  summary: string;
  description?: string;
  /** Minimum permission. 'public' = no credentials at all. */
  permission: PermissionLevel | 'public';
  /** Direct tokens are refused (403 PERMISSION_DENIED) unless 'allow'; the handler then checks allowedResourceId. */
  direct?: 'allow' | 'deny';
  /** Only login (and delegate) tokens; accesskeys get 403 DIRECT_ACCESS_NOT_SUPPORTED. */
  jwtOnly?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The request stream is left unread for the handler (uploads: multipart/form-data, raw bytes); no
   * JSON parsing, `body` is undefined. `contentTypes` documents what is accepted (default
   * application/octet-stream); the handler enforces its own size limit.
   */
  rawBody?: boolean;
  contentTypes?: string[];
  /** Adds page_size/page_token and fills `page`. */
  paginated?: boolean;
  /** Response schema (documentation; tests check handlers against it). */
  response: z.ZodType;
  /**
   * A handler that streams text itself (res.write) names the media types it answers with; the
   * document then lists them (a string body) and gives `response` as `x-record`, the schema of one
   * record (a CSV row, a JSON line). Default: application/json with `response`.
   */
  responseContentTypes?: string[];
  /** Success status, default 200. */
  status?: 200 | 201 | 202 | 204;
  /** Error statuses beyond the ones every route may answer (400, 401, 403, 404, 429, 500), e.g. 409: documented as the error envelope. */
  errors?: (409 | 416 | 503)[];
  handler: (args: HandlerArgs<z.output<P>, z.output<Q>, z.output<B>>) => unknown; // a value or a promise of one
}

export type AnyRoute = RouteDef<z.ZodType, z.ZodType, z.ZodType>;

export function defineRoute<P extends z.ZodType = z.ZodType<undefined>, Q extends z.ZodType = z.ZodType<undefined>, B extends z.ZodType = z.ZodType<undefined>>(
  def: RouteDef<P, Q, B>,
): RouteDef<P, Q, B> {
  return def.body ? { ...def, body: closed(def.body) } : def;
}

/**
 * Unknown body fields are refused everywhere (spec: Bad input): a plain z.object() body is made
 * strict here, so route authors cannot forget it. An object with an explicit catchall is left alone.
 */
function closed<B extends z.ZodType>(body: B): B {
  if (body instanceof z.ZodObject && body.def.catchall === undefined) return body.strict() as unknown as B;
  return body;
}

// ---- reusable schema pieces -------------------------------------------------------------------

/** A UUID path or body field (any 8-4-4-4-12 hex; invalid → INVALID_ID in paths). */
export const uuid = () => z.guid();
export const idParams = z.object({ id: uuid().describe('resource id (UUID)') });
/**
 * An optional reference to another resource in a body: a UUID, or '' for none (what clients of the
 * reference send when they must fill a required field; its server reads '' as the empty UUID).
 */
export const refId = () => z.union([z.literal(''), z.guid()]).optional();
/** A bounded free-text field. */
export const text = (max = 255) => z.string().max(max);

// ---- handler steps ------------------------------------------------------------------------------

/**
 * The load-or-404 step of a handler: the row the repository found (another customer's id finds
 * none), or the group's not-found error.
 */
export async function orMissing<T>(row: Promise<T | null | undefined>, missing: () => Error): Promise<T> {
  const r = await row;
  if (!r) throw missing();
  return r;
}

// ---- validation -------------------------------------------------------------------------------

type Issue = z.core.$ZodIssue;

function fieldOf(issue: Issue): string {
  return issue.path.map(String).join('.');
}

function isIdFormat(issue: Issue): boolean {
  return issue.code === 'invalid_format' && (issue.format === 'guid' || issue.format === 'uuid');
}

function isMissing(issue: Issue, input: unknown): boolean {
  if (issue.code === 'unrecognized_keys' || issue.path.length === 0) return false;
  let v: unknown = input;
  for (const k of issue.path) v = v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k as PropertyKey] : undefined;
  return v === undefined;
}

function describe(issues: Issue[], input: unknown) {
  return issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => ({ field: [...i.path.map(String), k].join('.'), issue: 'unknown field' }))
      : [{ field: fieldOf(i), issue: isMissing(i, input) ? 'required' : i.message }],
  );
}

export function validateParams<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const first = r.error.issues[0];
  const details = describe(r.error.issues, input);
  if (isIdFormat(first)) return fail('INVALID_ID', `${fieldOf(first)} is not a UUID`, details);
  return fail('INVALID_REQUEST_PARAMETER', `path parameter ${fieldOf(first)}: ${first.message}`, details);
}

export function validateQuery<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const first = r.error.issues[0];
  const details = describe(r.error.issues, input);
  if (isMissing(first, input)) return fail('MISSING_REQUEST_PARAMETER', `query parameter ${fieldOf(first)} is required`, details);
  if (isIdFormat(first)) return fail('INVALID_ID', `${fieldOf(first)} is not a UUID`, details);
  return fail('INVALID_REQUEST_PARAMETER', `query parameter ${fieldOf(first)}: ${first.message}`, details);
}

export function validateBody<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const body = input === undefined ? {} : input;
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const details = describe(r.error.issues, body);
  const first = details[0];
  const msg = first.field ? `${first.field}: ${first.issue}` : `body: ${first.issue}`;
  return fail('INVALID_ARGUMENT', msg, details);
}

function fail(reason: 'INVALID_ID' | 'INVALID_REQUEST_PARAMETER' | 'MISSING_REQUEST_PARAMETER' | 'INVALID_ARGUMENT', message: string, details: object[]): never {
  throw new ApiError(reason, message, { details: details as Record<string, unknown>[] });
}

// ---- mounting ---------------------------------------------------------------------------------

export interface RouteMiddlewares {
  /** credentials → per-customer limit → status gate, in that order. */
  authenticated: RequestHandler[];
  /** JSON body parser. */
  body: RequestHandler;
}

export function checkPermission(def: AnyRoute, a: AuthContext): void {
  if (a.kind === 'direct') {
    if (def.direct !== 'allow') throw permissionDenied('a direct token may not call this endpoint');
    return;
  }
  if (def.jwtOnly && a.kind === 'accesskey') throw directAccessNotSupported();
  if (def.permission !== 'public' && !hasLevel(a.permission, def.permission)) throw permissionDenied();
}

function handlerFor(def: AnyRoute, ctx: AppContext): RequestHandler {
  return async (req, res) => {
    const auth = req.auth as AuthContext;
    if (def.permission !== 'public') checkPermission(def, auth);
    const params = def.params ? validateParams(def.params, req.params) : undefined;
    const page = def.paginated ? parsePageQuery(req.query as Record<string, unknown>) : { pageSize: 100, pageToken: '' };
    const query = def.query ? validateQuery(def.query, req.query) : undefined;
    const body = def.body && !def.rawBody ? validateBody(def.body, req.body) : undefined;
    if (!def.body && !def.rawBody && req.body !== undefined && def.method !== 'get' && def.method !== 'delete') {
      throw new ApiError('INVALID_ARGUMENT', 'this endpoint takes no request body');
    }
    const out = await def.handler({ params, query, body, auth, page, ctx, req, res });
    if (res.headersSent) return;
    if (def.status === 204 || out === undefined) res.status(def.status ?? 200).end();
    else res.status(def.status ?? 200).json(out);
  };
}

/**
 * Mounts the routes grouped by their first path segment (one sub-router per resource group), so a
 * request is matched against a few dozen prefixes instead of every route of the API. Each route is
 * registered once, on its group's router; returns those routers by segment (for `groupDispatch`).
 */
export function mountRoutes(router: Router, ctx: AppContext, routes: AnyRoute[], mw: RouteMiddlewares): Map<string, Router> {
  const groups = new Map<string, Router>();
  for (const def of routes) {
    const body = def.rawBody ? [] : [mw.body];
    const handlers = [...(def.permission === 'public' ? [] : mw.authenticated), ...body, handlerFor(def, ctx)];
    const m = /^\/([A-Za-z0-9_.-]+)(\/.*)?$/.exec(def.path);
    if (!m) {
      router[def.method](def.path, ...handlers);
      continue;
    }
    let group = groups.get(m[1]);
    if (!group) {
      group = ExpressRouter({ mergeParams: true });
      groups.set(m[1], group);
      router.use(`/${m[1]}`, group);
    }
    group[def.method](m[2] ?? '/', ...handlers);
  }
  return groups;
}

/**
 * A front for `full` (the router mountRoutes filled): a request whose first path segment is exactly
 * one group's (same case, not percent-encoded) goes to a router holding only `before` (the
 * middlewares `full` runs ahead of its groups) and that group's own router, mounted as in `full`,
 * instead of being matched against every group mounted ahead of it. No route is registered again:
 * both ways end in the same group router. Anything else, including what this lookup cannot decide,
 * goes to `full` unchanged.
 */
export function groupDispatch(full: Router, groups: Map<string, Router>, before: RequestHandler[]): RequestHandler {
  const direct = new Map<string, Router>();
  for (const [segment, group] of groups) {
    const r = ExpressRouter();
    if (before.length) r.use(...before);
    r.use(`/${segment}`, group);
    direct.set(segment, r);
  }
  return (req, res, next) => {
    const url = req.url;
    let end = 1;
    if (url.charCodeAt(0) === 47 /* / */) {
      for (; end < url.length; end++) {
        const c = url.charCodeAt(end);
        if (c === 47 || c === 63 /* ? */) break;
      }
    }
    const r = end > 1 ? direct.get(url.slice(1, end)) : undefined;
    (r ?? full)(req, res, next);
  };
}
