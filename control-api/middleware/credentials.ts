/**
 * The credential middleware (spec: Authentication). A JWT comes as `Authorization: Bearer`, the
 * `token` query parameter or the `token` cookie; an accesskey only as the `accesskey` query
 * parameter. Nothing recognisable → 401 AUTHENTICATION_REQUIRED; anything invalid, expired or of
 * the wrong kind for its parameter → 401 INVALID_CREDENTIALS. Sets `req.auth`.
 */
import type { RequestHandler, Request } from 'express';
import type { AppContext, AuthContext } from '../context';
import { ApiError, authenticationRequired, invalidCredentials } from '../../core/errors';
import { TokenError, hashAccesskeyToken, verifyToken, type DirectClaims, type VerifiedClaims } from '../../core/credentials';
import { isAccesskeyExpired, type AccesskeyRow } from '../../core/repos';
import { Permission, isProjectSuperAdmin } from '../../core/permissions';
import { TtlCache } from '../../core/ttl-cache';
import { clock } from '../../core/clock';
import { isUuid } from '../../core/ids';
import { isSessionRevoked, revocationEpoch } from './sessions';

/** Reads one cookie without a cookie-parser dependency. */
export function readCookie(req: Pick<Request, 'headers'>, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    if (part.slice(0, i).trim() === name) {
      const v = part.slice(i + 1).trim();
      try {
        return decodeURIComponent(v);
      } catch {
        return v;
      }
    }
  }
  return undefined;
}

function queryString(query: unknown, name: string): string | undefined {
  const v = (query as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : undefined;
}

/** What credentials are read from: a request, or a WebSocket upgrade's headers and query. */
export type CredentialSource = Pick<Request, 'headers' | 'query'>;

export interface CredentialOptions {
  /** How long a verified credential is trusted without a database round trip (default 1000 ms). */
  cacheTtlMs?: number;
  /** Extra check for direct tokens (scope_version); default accepts. */
  checkDirect?: (claims: DirectClaims) => Promise<boolean>;
}

export interface Credentials {
  /** Middleware that requires credentials. */
  required: RequestHandler;
  /** Resolves credentials of a request (throws ApiError 401). Exposed for WebSocket upgrades. */
  resolve(req: CredentialSource): Promise<AuthContext>;
  /** Forget cached credentials after a key is deleted or an agent changes. */
  invalidateAccesskey(tokenHash: string): void;
  invalidateAgent(agentId: string): void;
}

type AgentInfo = { customerId: string; permission: number; generation: number } | null;
type AgentClaims = Extract<VerifiedClaims, { typ: 'login' | 'delegate' }>;
/** What a request carries: a JWT (header, query or cookie) or an accesskey. */
type Carried = { jwt: string; key?: undefined } | { jwt?: undefined; key: string };

export function createCredentials(ctx: AppContext, opts: CredentialOptions = {}): Credentials {
  const caches = credentialCaches(opts.cacheTtlMs ?? 1000);
  const { keyCache, agentCache, jwtCache, keyHashes } = caches;

  /** Signature, expiry and, for a login or delegate token with a session id, that it was not signed out. */
  async function verifiedClaims(token: string): Promise<VerifiedClaims> {
    const hit = jwtCache.get(token);
    if (hit !== undefined && hit.exp * 1000 > clock.nowMs()) return hit;
    const claims = await verifyToken(ctx.config.jwtSecret, token);
    if (claims.typ !== 'direct') {
      const sids = [claims.sid, claims.psid].filter((s): s is string => typeof s === 'string');
      if (await isSessionRevoked(ctx, ...sids)) throw invalidCredentials('session signed out');
    }
    jwtCache.set(token, claims);
    return claims;
  }

  async function agentInfo(agentId: string): Promise<AgentInfo> {
    const cached = agentCache.get(agentId);
    if (cached !== undefined) return cached;
    const a = isUuid(agentId) ? await ctx.repos.agents.get(agentId) : null;
    const info = a ? { customerId: a.customer_id, permission: Number(a.permission), generation: Number(a.session_generation) } : null;
    agentCache.set(agentId, info);
    return info;
  }

  async function fromJwt(token: string): Promise<AuthContext> {
    let claims;
    try {
      claims = await verifiedClaims(token);
    } catch (e) {
      if (e instanceof TokenError) throw invalidCredentials(e.kind === 'expired' ? 'token expired' : 'token invalid');
      throw e;
    }
    switch (claims.typ) {
      case 'login':
      case 'delegate':
        return agentAuth(claims, await agentInfo(claims.sub));
      case 'direct': {
        if (claims.scope_version !== ctx.config.directScopeVersion) throw invalidCredentials('direct token scope_version is outdated');
        if (opts.checkDirect && !(await opts.checkDirect(claims))) throw invalidCredentials('direct token revoked');
        return directAuth(claims);
      }
    }
  }

  async function fromAccesskey(token: string): Promise<AuthContext> {
    if (token.length > 256) throw invalidCredentials();
    const known = keyHashes.get(token);
    const hash = known ?? hashAccesskeyToken(token);
    let row = keyCache.get(hash);
    if (row === undefined) {
      row = await ctx.repos.accesskeys.getByToken(token);
      keyCache.set(hash, row);
    }
    if (row && known === undefined) keyHashes.set(token, hash);
    return keyAuth(row);
  }

  const fromCarried = (c: Carried) => (c.jwt !== undefined ? fromJwt(c.jwt) : fromAccesskey(c.key));

  return {
    resolve: async (req) => {
      caches.followRevocations();
      return fromCarried(pick(req));
    },
    required: requiredMiddleware(caches, fromCarried),
    invalidateAccesskey: (h) => keyCache.delete(h),
    invalidateAgent: (id) => agentCache.delete(id),
  };
}

/** The caches of verified credentials of one `createCredentials`, each trusted for `ttl` ms. */
interface CredentialCaches {
  keyCache: TtlCache<AccesskeyRow | null>;
  agentCache: TtlCache<AgentInfo>;
  jwtCache: TtlCache<VerifiedClaims>;
  keyHashes: TtlCache<string>;
  /** Drops the cached tokens and agents when a revocation happened in this process since the last call. */
  followRevocations(): void;
}

function credentialCaches(ttl: number): CredentialCaches {
  const jwtCache = new TtlCache<VerifiedClaims>(ttl);
  const agentCache = new TtlCache<AgentInfo>(ttl);
  // A revocation made in this process (sign-out, password change, freeze) drops every cached entry,
  // so this node refuses a revoked token at once (control-api/middleware/sessions.ts).
  let epoch = revocationEpoch();
  return {
    keyCache: new TtlCache<AccesskeyRow | null>(ttl),
    agentCache,
    // A client sends the same token request after request: its signature is checked once per `ttl`,
    // and the cached claims are never used past the token's own exp.
    jwtCache,
    // The SHA-256 of an accesskey that resolved to a key, so the repeat requests of one `ttl` skip the hash.
    keyHashes: new TtlCache<string>(ttl),
    followRevocations() {
      const now = revocationEpoch();
      if (now === epoch) return;
      epoch = now;
      jwtCache.clear();
      agentCache.clear();
    },
  };
}

/** Middleware that sets `req.auth`, without a promise when everything it needs is cached. */
function requiredMiddleware(caches: CredentialCaches, fromCarried: (c: Carried) => Promise<AuthContext>): RequestHandler {
  return (req, _res, next) => {
    let c: Carried;
    try {
      caches.followRevocations();
      c = pick(req);
      const auth = cachedAuth(caches, c);
      if (auth) {
        req.auth = auth;
        return next();
      }
    } catch (e) {
      return next(e);
    }
    fromCarried(c).then(
      (auth) => {
        req.auth = auth;
        next();
      },
      (e: unknown) => next(e instanceof ApiError ? e : e),
    );
  };
}

/** A login or delegate token's AuthContext from its agent's (cached or read) info. */
function agentAuth(claims: AgentClaims, a: AgentInfo): AuthContext {
  const session = { id: claims.sid ?? null, parentId: claims.psid ?? null, generation: claims.gen ?? 0, expiresAtMs: claims.exp * 1000 };
  if (claims.typ === 'login') {
    if (!a || a.customerId !== claims.customer_id) throw invalidCredentials('agent no longer exists');
    if (session.generation !== a.generation) throw invalidCredentials('session ended (password changed or account frozen)');
    return { kind: 'agent', customerId: a.customerId, agentId: claims.sub, permission: a.permission, session };
  }
  if (!a || !isProjectSuperAdmin(a.permission) || a.customerId !== claims.delegator_customer_id) {
    throw invalidCredentials('delegating agent no longer allowed');
  }
  if (session.generation !== a.generation) throw invalidCredentials('session ended (password changed or account frozen)');
  return {
    session,
    kind: 'delegate',
    customerId: claims.customer_id,
    agentId: claims.sub,
    delegatorCustomerId: claims.delegator_customer_id,
    permission: Permission.CustomerAdmin,
  };
}

function directAuth(claims: DirectClaims): AuthContext {
  return {
    kind: 'direct',
    customerId: claims.customer_id,
    resourceType: claims.resource_type,
    resourceId: claims.resource_id,
    allowedResourceId: claims.allowed_resource_id,
    scopeVersion: claims.scope_version,
    permission: Permission.None,
  };
}

function keyAuth(row: AccesskeyRow | null): AuthContext {
  if (!row) throw invalidCredentials('accesskey invalid');
  if (isAccesskeyExpired(row, clock.nowMs())) throw invalidCredentials('accesskey expired');
  // An accesskey acts for its customer with admin rights (it is created by an admin).
  return { kind: 'accesskey', customerId: row.customer_id, accesskeyId: row.id, permission: Permission.CustomerAdmin };
}

/** The credential a request carries; 401 for a malformed Authorization header or none at all. */
function pick(req: CredentialSource): Carried {
  const authz = req.headers.authorization;
  let jwt: string | undefined;
  if (typeof authz === 'string' && authz.length > 0) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
    if (!m) throw invalidCredentials('Authorization header must be "Bearer <token>"');
    jwt = m[1];
  }
  // express parses the query string again on every read of req.query: read it at most once.
  let query: unknown;
  if (jwt === undefined) {
    query = req.query;
    jwt = queryString(query, 'token') || undefined;
  }
  jwt ??= readCookie(req, 'token') || undefined;
  if (jwt) return { jwt };
  const key = queryString(query ?? req.query, 'accesskey');
  if (key) return { key };
  throw authenticationRequired();
}

/**
 * The AuthContext when everything it needs is cached (no promise, no database): what `fromJwt` /
 * `fromAccesskey` would return for it, or their 401. undefined when something must be read or checked.
 */
function cachedAuth({ jwtCache, agentCache, keyHashes, keyCache }: CredentialCaches, c: Carried): AuthContext | undefined {
  if (c.jwt !== undefined) {
    const claims = jwtCache.get(c.jwt);
    if (claims === undefined || claims.typ === 'direct' || claims.exp * 1000 <= clock.nowMs()) return undefined;
    const a = agentCache.get(claims.sub);
    return a === undefined ? undefined : agentAuth(claims, a);
  }
  if (c.key.length > 256) throw invalidCredentials();
  const hash = keyHashes.get(c.key);
  const row = hash === undefined ? undefined : keyCache.get(hash);
  return row === undefined ? undefined : keyAuth(row);
}
