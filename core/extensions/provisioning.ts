/**
 * Provisioning tokens: 64 lowercase hex characters (32 random bytes), valid 10 minutes by the platform
 * clock and reusable within that window. Only the sha256 of a token is stored.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { provisioningTokensRepo, provisioningCustomerSecretsRepo } from '../repos/extensions';
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

/**
 * A customer's DHCP option 66 provisioning secret: 64 lowercase hex characters in the path of
 * `/provisioning/customer/{secret}/`, valid until replaced or revoked; only its sha256 is stored, so
 * it is shown once, when issued.
 */
export async function issueCustomerProvisioningSecret(db: Db, customerId: string): Promise<{ secret: string; created: Date }> {
  const secret = randomBytes(32).toString('hex');
  const row = await provisioningCustomerSecretsRepo(db).replace(customerId, hashToken(secret));
  return { secret, created: row.tm_create };
}

/** The customer a DHCP provisioning secret belongs to, or null (malformed, unknown, revoked). */
export async function redeemCustomerProvisioningSecret(db: Db, secret: unknown): Promise<string | null> {
  if (typeof secret !== 'string' || !PROVISIONING_TOKEN_RE.test(secret)) return null;
  return (await provisioningCustomerSecretsRepo(db).getByHash(hashToken(secret)))?.customer_id ?? null;
}
