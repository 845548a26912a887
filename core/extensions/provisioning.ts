/**
 * Provisioning tokens: 64 lowercase hex characters (32 random bytes), valid 10 minutes by the platform
 * clock and reusable within that window. Only the sha256 of a token is stored.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { provisioningTokensRepo } from '../repos/extensions';
import { extensionsRepo, type ExtensionRow } from '../repos/extensions';

export const PROVISIONING_TOKEN_TTL_MS = 10 * 60 * 1000;
export const PROVISIONING_TOKEN_RE = /^[0-9a-f]{64}$/;

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface IssuedToken {
  token: string;
  expire: Date;
}

export async function issueProvisioningToken(db: Db, extension: Pick<ExtensionRow, 'id' | 'customer_id'>): Promise<IssuedToken> {
  const repo = provisioningTokensRepo(db);
  await repo.purgeExpired();
  const token = randomBytes(32).toString('hex');
  const expire = new Date(clock.nowMs() + PROVISIONING_TOKEN_TTL_MS);
  await repo.create({ token_hash: hashToken(token), extension_id: extension.id, customer_id: extension.customer_id, tm_expire: expire });
  return { token, expire };
}

/** The live extension a token stands for, or null (malformed, unknown, expired, extension deleted). */
export async function redeemProvisioningToken(db: Db, token: unknown): Promise<ExtensionRow | null> {
  if (typeof token !== 'string' || !PROVISIONING_TOKEN_RE.test(token)) return null;
  const row = await provisioningTokensRepo(db).getValid(hashToken(token));
  if (!row) return null;
  const ext = await extensionsRepo(db).get(row.extension_id);
  return ext && ext.customer_id === row.customer_id ? ext : null;
}
