// Password reset tokens: 64 lowercase hex, single use. A reset link lives 1 hour (voipbin's
// passwordResetTokenTTL); the first-password link sent after verification lives 24 hours, like the
// verification link, because a newcomer may verify now and come back later.
import type { Db } from '../../core/db/knex';
import { clock } from '../../core/clock';
import { resetTokensRepo, type ResetTokenRow } from '../../core/repos/mail-tokens';
import { hashMailToken, newMailToken } from './secret-token';

export type { ResetTokenRow };

export const RESET_TOKEN_TTL_MS = 3600_000;
export const WELCOME_TOKEN_TTL_MS = 24 * 3600_000;

export async function issueResetToken(db: Db, agent: { id: string; customer_id: string }, ttlMs = RESET_TOKEN_TTL_MS): Promise<string> {
  const token = newMailToken();
  const now = clock.now();
  await resetTokensRepo(db).create({
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
  return resetTokensRepo(db).getUsable(hashMailToken(token), clock.now());
}

/** Uses the token and every other open token of the same agent (a new password retires old links). */
export async function consumeResetToken(db: Db, row: ResetTokenRow): Promise<boolean> {
  const now = clock.now();
  const tokens = resetTokensRepo(db);
  if (!(await tokens.use(row.token_hash, now))) return false;
  await tokens.useAllOfAgent(row.agent_id, now);
  return true;
}
