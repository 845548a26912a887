/**
 * The gate and the revocation watch of every authenticated WebSocket of control-api (/v1.0/ws, the
 * agent socket, media streams). At upgrade: the session cookie from a page of another origin is
 * refused (403 PERMISSION_DENIED, middleware/origin.ts), credentials as on REST (401), then the account status
 * gate (403 ACCOUNT_FROZEN / ACCOUNT_EXPIRED / ACCOUNT_DELETED, failing open when the lookup fails,
 * as the REST gate does). While open, a socket is closed with 1008 and the reason when
 *   - its credential expires (a timer at the JWT's exp or the accesskey's tm_expire);
 *   - its accesskey or agent is deleted, its agent's permission changes, its session is signed out or
 *     ended (password change, freeze), or the account leaves good standing: checked at once when a
 *     `recheck` for its customer arrives on the Redis channel (every control-api copy listens), and by
 *     a periodic pass over all sockets every `recheckMs` (default 3 s) as the backstop for changes
 *     nobody announced (jobs, another tool writing the database).
 *
 *   const guard = await createSocketGuard(ctx);
 *   const { auth, expiresAtMs } = await guard.admit(req, url);      // throws ApiError 401/403
 *   const untrack = guard.track({ auth, expiresAtMs, close: (code, why) => ws.close(code, why) });
 *   await publishRecheck(ctx, customerId);                          // after revoking something
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Redis } from 'ioredis';
import { decodeJwt } from 'jose';
import type { AppContext, AuthContext } from '../context';
import { createCredentials, readCookie, type CredentialSource, type Credentials } from '../middleware/credentials';
import { statusError } from '../middleware/status-gate';
import { isSessionRevoked } from '../middleware/sessions';
import { foreignCookieRequest, foreignOriginRefused } from '../middleware/origin';
import { ApiError } from '../../core/errors';
import { isAccesskeyExpired } from '../../core/repos';
import { isProjectSuperAdmin } from '../../core/permissions';
import { clock } from '../../core/clock';
import { guardSocket } from '../../core/net/socket-guard';

export const CLOSE_REVOKED = 1008;
export const DEFAULT_RECHECK_MS = 3000;

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict', 500: 'Internal Server Error', 503: 'Service Unavailable' };

/** Answers a refused upgrade with the error envelope and the error's HTTP status instead of 101. */
export function refuseUpgrade(socket: Duplex, e: unknown, requestId: string): void {
  guardSocket(socket);
  if (socket.destroyed) return; // the client left during admission
  const err = e instanceof ApiError ? e : new ApiError('INTERNAL', 'internal error');
  const body = JSON.stringify(err.toEnvelope(requestId));
  socket.end(
    `HTTP/1.1 ${err.http} ${STATUS_TEXT[err.http] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `X-Request-Id: ${requestId}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The client's X-Request-Id (bounded) or a fresh one, for a refused upgrade's envelope. */
export function upgradeRequestId(req: http.IncomingMessage): string {
  const h = req.headers['x-request-id'];
  return (typeof h === 'string' && h.slice(0, 128)) || randomUUID();
}

/** The request shape the credential middleware reads, from a raw upgrade request. */
export function upgradeRequest(req: http.IncomingMessage, url: URL): CredentialSource {
  return { headers: req.headers, query: Object.fromEntries(url.searchParams) };
}

/** The scheme the client used: TLS on the socket, or (TRUST_PROXY) the proxy's X-Forwarded-Proto, as express reads it. */
function upgradeScheme(ctx: AppContext, req: http.IncomingMessage): 'http' | 'https' {
  if ('encrypted' in req.socket && req.socket.encrypted === true) return 'https';
  const fwd = req.headers['x-forwarded-proto'];
  const first = typeof fwd === 'string' ? fwd.split(',', 1)[0]!.trim().toLowerCase() : '';
  return ctx.config.trustProxy && first === 'https' ? 'https' : 'http';
}

/** The Redis channel that asks every copy to recheck one customer's sockets now. */
export function recheckChannel(ctx: AppContext): string {
  return `${ctx.config.redisKeyPrefix}ws:recheck`;
}

/** Announces that a credential or the account of `customerId` changed: its sockets are rechecked at once. */
export async function publishRecheck(ctx: AppContext, customerId: string): Promise<void> {
  try {
    await ctx.redis.publish(recheckChannel(ctx), customerId.toLowerCase());
  } catch (err) {
    ctx.logger.warn({ err: String(err) }, 'ws recheck publish failed; the periodic pass will catch up');
  }
}

export interface Admission {
  auth: AuthContext;
  /** When the credential stops being valid (ms since epoch), if it expires. */
  expiresAtMs: number | null;
}

export interface GuardedSocket extends Admission {
  close(code: number, reason: string): void;
}

export interface SocketGuard {
  admit(req: http.IncomingMessage, url: URL): Promise<Admission>;
  /** Watches an open socket; the returned function stops watching (call it on close). */
  track(s: GuardedSocket): () => void;
  /** One pass over every socket (tests; the interval runs it too). */
  recheckAll(): Promise<void>;
  close(): Promise<void>;
}

export interface SocketGuardOptions {
  credentials?: Credentials;
  /** Period of the backstop pass (default 3000 ms). */
  recheckMs?: number;
}

function jwtOf(req: CredentialSource): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(String(req.headers.authorization ?? ''));
  const q = (req.query as Record<string, unknown>).token;
  return m?.[1] ?? ((typeof q === 'string' && q) || readCookie(req, 'token') || null);
}

async function expiryOf(ctx: AppContext, auth: AuthContext, req: CredentialSource): Promise<number | null> {
  if (auth.kind === 'accesskey') {
    const row = await ctx.repos.accesskeys.get(auth.accesskeyId);
    return row ? row.tm_expire.getTime() : null;
  }
  const jwt = jwtOf(req);
  if (!jwt) return null;
  try {
    const { exp } = decodeJwt(jwt);
    return typeof exp === 'number' ? exp * 1000 : null;
  } catch {
    return null;
  }
}

/** Memoised lookups of one pass, so a customer's many sockets cost one query each. */
class PassLookups {
  private readonly memo = new Map<string, Promise<unknown>>();
  constructor(private readonly ctx: AppContext) {}
  private once<T>(key: string, f: () => Promise<T>): Promise<T> {
    let p = this.memo.get(key) as Promise<T> | undefined;
    if (!p) this.memo.set(key, (p = f()));
    return p;
  }
  status(customerId: string) {
    return this.once(`s:${customerId}`, () => this.ctx.statusLookup(customerId));
  }
  accesskey(id: string) {
    return this.once(`k:${id}`, () => this.ctx.repos.accesskeys.get(id));
  }
  agent(id: string) {
    return this.once(`a:${id}`, () => this.ctx.repos.agents.get(id));
  }
  sessionRevoked(sid: string | null) {
    return sid === null ? Promise.resolve(false) : this.once(`r:${sid}`, () => isSessionRevoked(this.ctx, sid));
  }
}

/** Why an open socket must close now, or null. A failing lookup keeps it open (fail open, like REST). */
async function revocation(s: Admission, look: PassLookups): Promise<string | null> {
  const a = s.auth;
  let ended: string | null = null;
  if (s.expiresAtMs !== null && clock.nowMs() >= s.expiresAtMs) return a.kind === 'accesskey' ? 'accesskey expired' : 'token expired';
  try {
    if (a.kind === 'accesskey') {
      const row = await look.accesskey(a.accesskeyId);
      if (!row) return 'accesskey deleted';
      if (isAccesskeyExpired(row, clock.nowMs())) return 'accesskey expired';
    } else if (a.kind === 'agent' || a.kind === 'delegate') {
      const agent = await look.agent(a.agentId);
      const home = a.kind === 'agent' ? a.customerId : a.delegatorCustomerId;
      if (!agent || agent.customer_id !== home) return 'agent deleted';
      // REST reads the current permission on every request; a socket keeps the one it was admitted with
      if (a.kind === 'agent' && Number(agent.permission) !== a.permission) return 'agent permission changed';
      if (a.kind === 'delegate' && !isProjectSuperAdmin(Number(agent.permission))) return 'delegating agent no longer allowed';
      // a password change or a freeze ended every session of the agent; a sign-out ended this one
      // (told after the account's standing, so a frozen account's sockets close with ACCOUNT_FROZEN)
      if (Number(agent.session_generation) !== (a.session?.generation ?? 0)) ended = 'session ended';
      // (a delegate token's login session too)
      else if (a.session && ((await look.sessionRevoked(a.session.id)) || (await look.sessionRevoked(a.session.parentId)))) ended = 'session signed out';
    }
    const info = await look.status(a.customerId);
    if (!info) return 'customer not found';
    return statusError(info)?.reason ?? ended;
  } catch {
    return null;
  }
}

export async function createSocketGuard(ctx: AppContext, opts: SocketGuardOptions = {}): Promise<SocketGuard> {
  const credentials = opts.credentials ?? createCredentials(ctx, { cacheTtlMs: 1000 });
  const byCustomer = new Map<string, Set<GuardedSocket>>();
  const timers = new Map<GuardedSocket, NodeJS.Timeout>();

  async function check(list: GuardedSocket[]): Promise<void> {
    const look = new PassLookups(ctx);
    await Promise.all(
      list.map(async (s) => {
        const why = await revocation(s, look);
        if (why) s.close(CLOSE_REVOKED, why);
      }),
    );
  }

  let running: Promise<void> | null = null;
  const recheckAll = async () => {
    if (running) return running;
    running = check([...new Set([...byCustomer.values()].flatMap((set) => [...set]))]).finally(() => (running = null));
    return running;
  };
  const interval = setInterval(() => void recheckAll(), opts.recheckMs ?? DEFAULT_RECHECK_MS);
  interval.unref();

  const sub: Redis = ctx.redis.duplicate();
  sub.on('error', (err: unknown) => ctx.logger.warn({ err: String(err) }, 'ws recheck subscriber error'));
  sub.on('message', (_channel: string, customerId: string) => {
    const set = byCustomer.get(customerId);
    if (set) void check([...set]);
  });
  await sub.subscribe(recheckChannel(ctx));

  return {
    admit: (req, url) => admit(ctx, credentials, req, url),
    track(s) {
      // a delegate token's socket is rechecked for its delegator's customer too (a sign-out there ends it)
      const keys = [s.auth.customerId, ...(s.auth.kind === 'delegate' ? [s.auth.delegatorCustomerId] : [])].map((k) => k.toLowerCase());
      for (const key of keys) {
        let set = byCustomer.get(key);
        if (!set) byCustomer.set(key, (set = new Set()));
        set.add(s);
      }
      armExpiry(timers, s);
      return () => {
        const t = timers.get(s);
        if (t) clearTimeout(t);
        timers.delete(s);
        for (const key of keys) {
          const cur = byCustomer.get(key);
          cur?.delete(s);
          if (cur && cur.size === 0) byCustomer.delete(key);
        }
      };
    },
    recheckAll,
    async close() {
      clearInterval(interval);
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
      byCustomer.clear();
      await running;
      sub.disconnect();
    },
  };
}

/** The upgrade's credential, refused for a foreign page's cookie or a customer not in good standing. */
async function admit(ctx: AppContext, credentials: Credentials, req: http.IncomingMessage, url: URL): Promise<Admission> {
  const fake = upgradeRequest(req, url);
  // the session cookie from another site's page opens nothing (docs/security.md "Origin checks")
  if (foreignCookieRequest(ctx.config.publicUrl, fake, `${upgradeScheme(ctx, req)}://${req.headers.host ?? ''}`)) throw foreignOriginRefused();
  const auth = await credentials.resolve(fake);
  let info;
  try {
    info = await ctx.statusLookup(auth.customerId);
  } catch (err) {
    ctx.logger.warn({ err: String(err) }, 'customer status lookup failed; failing open');
    info = undefined;
  }
  if (info === null) throw new ApiError('INVALID_CREDENTIALS', 'customer not found');
  const refused = info ? statusError(info) : null;
  if (refused) throw refused;
  return { auth, expiresAtMs: await expiryOf(ctx, auth, fake) };
}

/** Closes the socket when its credential expires (the timer kept in `timers`). */
function armExpiry(timers: Map<GuardedSocket, NodeJS.Timeout>, s: GuardedSocket): void {
  if (s.expiresAtMs === null) return;
  // setTimeout holds at most ~24.8 days; a longer-lived credential is re-armed on the way
  const arm = () => {
    const left = s.expiresAtMs! - clock.nowMs();
    if (left <= 0) return s.close(CLOSE_REVOKED, s.auth.kind === 'accesskey' ? 'accesskey expired' : 'token expired');
    const t = setTimeout(arm, Math.min(left, 2 ** 31 - 1));
    t.unref();
    timers.set(s, t);
  };
  arm();
}
