// Email verification tokens (spec Limits: 24 h, 64 lowercase hex, several valid at once).
import type { Db } from '../../core/db/knex';
import { clock } from '../../core/clock';
import { verificationTokensRepo, type VerificationTokenRow } from '../../core/repos/mail-tokens';
import { hashMailToken, newMailToken } from './secret-token';

export type { VerificationTokenRow };

export const VERIFICATION_TOKEN_TTL_MS = 24 * 3600_000;

/** Issues a new token for the customer; earlier tokens stay valid until their own expiry. */
export async function issueVerificationToken(db: Db, customerId: string): Promise<string> {
  const token = newMailToken();
  const now = clock.now();
  await verificationTokensRepo(db).create({
    token_hash: hashMailToken(token),
    customer_id: customerId,
    tm_create: now,
    tm_expire: new Date(now.getTime() + VERIFICATION_TOKEN_TTL_MS),
  });
  return token;
}

export async function findVerificationToken(db: Db, token: string): Promise<VerificationTokenRow | undefined> {
  return verificationTokensRepo(db).getByHash(hashMailToken(token));
}

export function verificationTokenState(row: VerificationTokenRow | undefined): 'unknown' | 'used' | 'expired' | 'valid' {
  if (!row) return 'unknown';
  if (row.tm_used) return 'used';
  if (row.tm_expire.getTime() <= clock.nowMs()) return 'expired';
  return 'valid';
}

/**
 * Marks the token used if it is still unused and unexpired; false when another request won the race.
 * Runs inside the caller's transaction so the customer update and the token use commit together.
 */
export async function consumeVerificationToken(db: Db, token: string): Promise<boolean> {
  return verificationTokensRepo(db).use(hashMailToken(token), clock.now());
}
