/**
 * Revoking sessions (control-api/middleware/sessions.ts explains the model): one session at sign-out,
 * and the announcement after any revocation (this process's caches, the customer's open sockets).
 */
import type { AppContext, AuthContext, SessionRef } from '../context';
import type { CredentialSource, Credentials } from './credentials';
import { ApiError } from '../../core/errors';
import { clock } from '../../core/clock';
import { publishRecheck } from '../ws/guard';
import { noteRevocation, revokedSessionKey } from './sessions';
import { WebSipCredentials } from '../../core/workspace/web-sip-credentials';

/** Kept a minute past the token's exp, so a clock skew between nodes cannot revive it. */
const KEEP_PAST_EXP_MS = 60_000;

/** Announces revoked sessions: this process's caches drop them now, open sockets of the customer are rechecked. */
export async function sessionsRevoked(ctx: AppContext, customerId: string): Promise<void> {
  noteRevocation();
  await publishRecheck(ctx, customerId);
}

/**
 * Signs out the session an agent or delegate token belongs to, and the browser SIP credentials it
 * asked for. A token without a session id (signed before sessions existed) cannot be told apart from
 * the agent's other tokens: all of them are retired (which ends every credential of the agent too).
 */
export async function signOutSession(ctx: AppContext, auth: Extract<AuthContext, { kind: 'agent' | 'delegate' }>): Promise<void> {
  const s: SessionRef | undefined = auth.session;
  if (s?.id) {
    const ttl = Math.max(1, s.expiresAtMs - clock.nowMs()) + KEEP_PAST_EXP_MS;
    await ctx.redis.set(revokedSessionKey(ctx, s.id), '1', 'PX', ttl);
    await new WebSipCredentials(ctx.redis, ctx.config.redisKeyPrefix).revokeSession(auth.agentId, s.id);
  } else {
    await ctx.repos.agents.retireSessions({ agentId: auth.agentId });
  }
  ctx.logger.info({ agent_id: auth.agentId, customer_id: auth.customerId, kind: auth.kind }, 'session signed out');
  await sessionsRevoked(ctx, auth.customerId);
}

/**
 * Ends the session of whatever login or delegate token a request carries, if any (the console's
 * sign-out): no token, a bad, expired or already ended one, an accesskey or a direct token is nothing
 * to end. Other failures (Redis, database) are thrown: the caller must not claim a sign-out it did not make.
 */
export async function signOutCarried(ctx: AppContext, credentials: Credentials, req: CredentialSource): Promise<void> {
  let auth: AuthContext;
  try {
    auth = await credentials.resolve(req);
  } catch (e) {
    if (e instanceof ApiError && e.http === 401) return;
    throw e;
  }
  if (auth.kind === 'agent' || auth.kind === 'delegate') await signOutSession(ctx, auth);
}
