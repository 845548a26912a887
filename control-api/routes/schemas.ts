/** Response schemas shared by route files (documentation; the JSON builders live in core/repos). */
import { z } from 'zod';

export const legacyTime = () => z.string().describe('YYYY-MM-DD HH:MM:SS.ffffff; 9999-01-01 00:00:00.000000 when unset');
export const rfc3339OrNull = () => z.string().nullable().describe('RFC 3339, null when unset');
export const uuidOut = () => z.string().describe('UUID');

export const accesskeySchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  name: z.string(),
  detail: z.string(),
  token: z.string().optional().describe('the secret; returned only by POST /accesskeys'),
  token_prefix: z.string(),
  tm_expire: legacyTime(),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

export const customerSchema = z.object({
  id: uuidOut(),
  name: z.string(),
  detail: z.string(),
  email: z.string(),
  phone_number: z.string(),
  address: z.string(),
  webhook_method: z.enum(['', 'POST', 'GET', 'PUT', 'DELETE']),
  webhook_uri: z.string(),
  webhook_secret: z
    .string()
    .optional()
    .describe('HMAC secret of the webhook signatures; only on /customer: masked (last 4 characters) on GET and PUT, whole once in the answer of POST /customer/webhook_secret'),
  webhook_secret_set: z.boolean().optional().describe('whether the account has a webhook secret; only on /customer'),
  billing_account_id: uuidOut(),
  metadata: z.record(z.string(), z.unknown()),
  email_verified: z.boolean(),
  status: z.enum(['initial', 'active', 'frozen', 'expired', 'deleted']),
  identity_verification_status: z.enum(['none', 'pending', 'verified', 'rejected']),
  tm_deletion_scheduled: legacyTime(),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

export const addressSchema = z.object({
  type: z.string(),
  target: z.string(),
  target_name: z.string().optional(),
  name: z.string().optional(),
  detail: z.string().optional(),
});

export const agentSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  username: z.string(),
  name: z.string(),
  detail: z.string(),
  ring_method: z.enum(['ringall', 'linear']),
  status: z.enum(['', 'available', 'away', 'busy', 'offline', 'ringing']),
  permission: z.number().int().describe('bitmask: 1 ProjectSuperAdmin, 16 agent, 32 admin, 64 manager'),
  tag_ids: z.array(uuidOut()),
  addresses: z.array(addressSchema),
  direct_hash: z.string(),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

export const outboundConfigSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  name: z.string(),
  detail: z.string(),
  destination_whitelist: z.array(z.string()),
  codecs: z.string(),
  default_outgoing_source_number_id: uuidOut(),
  tm_create: rfc3339OrNull(),
  tm_update: rfc3339OrNull(),
  tm_delete: rfc3339OrNull(),
});

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ result: z.array(item), next_page_token: z.string() });
}
