/**
 * Server-side sessions of login and delegate tokens (docs/security.md "Sessions"). A token carries
 * its session id (`sid`) and its agent's session generation (`gen`, core/credentials.ts):
 *   - sign-out revokes the one session: `<prefix>session:revoked:<sid>` in Redis until the token's exp,
 *     and with it the delegate tokens that session asked for (their `psid`);
 *   - a password change or an account freeze raises the agent's session_generation in Postgres
 *     (core/repos/agents.ts retireSessions / update with a password): every older token is refused.
 * Both are checked when a token is verified, i.e. once per credential cache window (cacheTtlMs) per
 * token. A revocation made in this process bumps the process-wide `revocationEpoch`: every credential
 * cache of the process (REST and each WebSocket guard) drops its entries at its next use, so the node
 * that revoked refuses the token at once; other nodes refuse it when their cache entry expires.
 */
import type { AppContext } from '../context';
import { serviceUnavailable } from '../../core/errors';

let epoch = 0;

/** Bumped by every revocation made in this process; credential caches compare it on each use. */
export function revocationEpoch(): number {
  return epoch;
}

/** Drops every credential cache of this process at its next use (after a revocation). */
export function noteRevocation(): void {
  epoch += 1;
}

export function revokedSessionKey(ctx: AppContext, sid: string): string {
  return `${ctx.config.redisKeyPrefix}session:revoked:${sid}`;
}

/**
 * Whether any of the sessions was signed out (a delegate token's own and its login session's). A
 * failing Redis refuses the request (503), it does not let it pass.
 */
export async function isSessionRevoked(ctx: AppContext, ...sids: string[]): Promise<boolean> {
  if (sids.length === 0) return false;
  try {
    return (await ctx.redis.exists(...sids.map((sid) => revokedSessionKey(ctx, sid)))) > 0;
  } catch (err) {
    ctx.logger.warn({ err: String(err) }, 'session revocation lookup failed');
    throw serviceUnavailable('session check unavailable, try again');
  }
}
