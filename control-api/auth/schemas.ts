// Request bodies of the auth group (shapes from the spec, and from voipbin's openapi where the spec says
// "not shown"). Unknown fields are refused like everywhere else in the API. One source for validation
// and for the OpenAPI document (openapi.ts).
import { z } from 'zod';

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);

export const signupBody = z.strictObject({
  email: z.string().max(320),
  accepted_tos: z.boolean(),
  name: z.string().max(255).optional(),
  detail: z.string().max(2000).optional(),
  phone_number: z.string().max(32).optional(),
  address: z.string().max(1000).optional(),
  webhook_method: z.enum(['', 'POST', 'GET', 'PUT', 'DELETE']).optional(),
  webhook_uri: z.string().max(2048).optional(),
});

export const emailVerifyBody = z.strictObject({ token: hex64 });

export const emailVerifyResendBody = z.strictObject({ email: z.string().max(320) });

export const loginBody = z.strictObject({
  username: z.string().min(1).max(320),
  password: z.string().min(1).max(1024),
});

export const passwordForgotBody = z.strictObject({ username: z.string().min(1).max(320) });

export const PASSWORD_MIN_LENGTH = 8;
export const passwordResetBody = z.strictObject({
  token: hex64,
  password: z.string().min(PASSWORD_MIN_LENGTH).max(1024),
});

/** Exactly one of password and confirmation_phrase (voipbin; checked in the handler). */
export const unregisterBody = z.strictObject({
  password: z.string().max(1024).optional(),
  confirmation_phrase: z.string().max(64).optional(),
  immediate: z.boolean().optional(),
});
/** voipbin's phrase for unregistering without a password (access keys, SSO). */
export const CONFIRMATION_PHRASE = 'DELETE';

export const bootBody = z.strictObject({ direct_hash: z.string().min(1).max(512) });

/** Refresh takes its target from the token; an empty object (or no body) is all it accepts. */
export const bootRefreshBody = z.strictObject({});

export const delegateBody = z.strictObject({
  customer_id: z.string(),
  // voipbin: 10 to 200 printable ASCII characters, kept in the audit log.
  reason: z
    .string()
    .min(10)
    .max(200)
    .regex(/^[\x20-\x7e]+$/),
});
