// Password reset tokens: 64 lowercase hex, single use. A reset link lives 1 hour (voipbin's
// passwordResetTokenTTL); the first-password link sent after verification lives 24 hours, like the
// verification link, because a newcomer may verify now and come back later.
import type { Db } from '../../core/db/knex';
import { clock } from '../../core/clock';
import { hashMailToken, newMailToken } from './secret-token';

export const RESET_TOKEN_TTL_MS = 3600_000;
export const WELCOME_TOKEN_TTL_MS = 24 * 3600_000;

import type { ResetTokenRow } from '../../core/db/tables';
export type { ResetTokenRow };

export async function issueResetToken(db: Db, agent: { id: string; customer_id: string }, ttlMs = RESET_TOKEN_TTL_MS): Promise<string> {
  const token = newMailToken();
  const now = clock.now();
  await db('password_reset_tokens').insert({
    token_hash: hashMailToken(token),
    customer_id: agent.customer_id,
    agent_id: agent.id,
    tm_create: now,
    tm_expire: new Date(now.getTime() + ttlMs),
  });
  return token;
}

/** The row of a usable (unused, unexpired) token, or undefined. */
export async function findUsableResetToken(db: Db, token: string): Promise<ResetTokenRow | undefined> {
  return db('password_reset_tokens')
    .where({ token_hash: hashMailToken(token) })
    .whereNull('tm_used')
    .where('tm_expire', '>', clock.now())
    .first();
}

/** Uses the token and every other open token of the same agent (a new password retires old links). */
export async function consumeResetToken(db: Db, row: ResetTokenRow): Promise<boolean> {
  const now = clock.now();
  const n = await db('password_reset_tokens').where({ token_hash: row.token_hash }).whereNull('tm_used').update({ tm_used: now });
  if (n !== 1) return false;
  await db('password_reset_tokens').where({ agent_id: row.agent_id }).whereNull('tm_used').update({ tm_used: now });
  return true;
}
