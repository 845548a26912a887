/**
 * The single-use tokens mailed to people: email verification (`email_verification_tokens`) and
 * password reset / first password (`password_reset_tokens`). Rows hold only the token's hash; making
 * and hashing tokens is the caller's (control-api/auth/secret-token.ts).
 */
import type { Db } from '../db/knex';
import type { ResetTokenRow, VerificationTokenRow } from '../db/rows/mail-tokens';
export type { ResetTokenRow, VerificationTokenRow } from '../db/rows/mail-tokens';

export function verificationTokensRepo(db: Db) {
  return {
    async create(row: Omit<VerificationTokenRow, 'tm_used'>): Promise<void> {
      await db('email_verification_tokens').insert(row);
    },
    async getByHash(tokenHash: string): Promise<VerificationTokenRow | undefined> {
      return db<VerificationTokenRow>('email_verification_tokens').where({ token_hash: tokenHash }).first();
    },
    /** Marks the token used when it is unused and unexpired at `now`; false when it was not (another request won). */
    async use(tokenHash: string, now: Date): Promise<boolean> {
      const n = await db('email_verification_tokens').where({ token_hash: tokenHash }).whereNull('tm_used').where('tm_expire', '>', now).update({ tm_used: now });
      return n === 1;
    },
  };
}

export function resetTokensRepo(db: Db) {
  return {
    async create(row: Omit<ResetTokenRow, 'tm_used'>): Promise<void> {
      await db('password_reset_tokens').insert(row);
    },
    /** The row of a token unused and unexpired at `now`. */
    async getUsable(tokenHash: string, now: Date): Promise<ResetTokenRow | undefined> {
      return db<ResetTokenRow>('password_reset_tokens').where({ token_hash: tokenHash }).whereNull('tm_used').where('tm_expire', '>', now).first();
    },
    /** Marks the token used when it is unused; false when it was not. */
    async use(tokenHash: string, now: Date): Promise<boolean> {
      const n = await db('password_reset_tokens').where({ token_hash: tokenHash }).whereNull('tm_used').update({ tm_used: now });
      return n === 1;
    },
    /** Marks every open token of the agent used (a new password retires old links). */
    async useAllOfAgent(agentId: string, now: Date): Promise<void> {
      await db('password_reset_tokens').where({ agent_id: agentId }).whereNull('tm_used').update({ tm_used: now });
    },
  };
}
