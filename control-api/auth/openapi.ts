// The auth group's part of the OpenAPI document, from the same zod schemas that validate the bodies.
// The group is not under /v1.0, so each path carries its own `servers` entry (the public URL root).
import { z } from 'zod';
import * as s from './schemas';

type Json = Record<string, unknown>;

function body(schema: z.ZodType): Json {
  const js = z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' }) as Json;
  delete js.$schema;
  return { required: true, content: { 'application/json': { schema: js } } };
}

const bare400 = { description: 'Bare 400: empty body (validation failure inside the auth handler).' };
const empty200 = { description: 'Always `{}`.', content: { 'application/json': { schema: { type: 'object' } } } };
const html = (d: string) => ({ description: d, content: { 'text/html': { schema: { type: 'string' } } } });
const json = (d: string, props: Record<string, Json>) => ({ description: d, content: { 'application/json': { schema: { type: 'object', properties: props } } } });
const envelope = (d: string) => ({ description: d, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } });
const tokenQuery = [{ name: 'token', in: 'query', required: true, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } }];
const bootObject = {
  token: { type: 'string' },
  type: { type: 'string', enum: ['direct'] },
  resource_type: { type: 'string', example: 'ai' },
  resource_id: { type: 'string', format: 'uuid' },
  customer_id: { type: 'string', format: 'uuid' },
  expire: { type: 'string', format: 'date-time' },
  allowed_resource_id: { type: 'string', format: 'uuid' },
  scope_version: { type: 'integer' },
  resource_data: { type: 'object', properties: { public_display_config: { type: 'object' } } },
};
// Scheme names of control-api/openapi.ts's components.securitySchemes.
const credentials = [{ bearer: [] }, { tokenQuery: [] }, { tokenCookie: [] }, { accesskey: [] }];

/** Operations without `security` are public: `security: []` overrides the document-wide default. */
function op(summary: string, extra: Json): Json {
  return { tags: ['Auth'], summary, security: [], ...extra };
}

/** `paths` entries for /auth/*, each with `servers: [{url: publicUrl}]`. */
export function authOpenApiPaths(publicUrl: string): Record<string, Json> {
  const servers = [{ url: publicUrl.replace(/\/+$/, '') }];
  const p: Record<string, Json> = {
    '/auth/signup': {
      post: op('Create a customer account (self-service signup)', {
        requestBody: body(s.signupBody),
        responses: { 200: json('`{customer, accesskey}`, or `{}` for a duplicate or invalid email', { customer: { type: 'object' }, accesskey: { type: 'object' } }), 400: bare400 },
      }),
    },
    '/auth/email-verify': {
      get: op('Page that submits the verification token', { parameters: tokenQuery, responses: { 200: html('Verification page, or a resend form for an expired link'), 400: bare400 } }),
      post: op('Verify the email address', { requestBody: body(s.emailVerifyBody), responses: { 200: json('`{customer}`', { customer: { type: 'object' } }), 400: bare400 } }),
    },
    '/auth/email-verify-resend': {
      post: op('Send a new verification link (1 per 60 s, 5 per 24 h)', { requestBody: body(s.emailVerifyResendBody), responses: { 200: empty200 } }),
    },
    '/auth/login': {
      post: op('Log in; the JWT is also set as cookie `token`', {
        requestBody: body(s.loginBody),
        responses: {
          200: json('Login token (7 days)', { username: { type: 'string' }, token: { type: 'string' } }),
          400: bare400,
          403: envelope('ACCOUNT_EXPIRED or ACCOUNT_DELETED'),
          429: envelope('RATE_LIMIT_EXCEEDED with Retry-After: too many attempts for this username (5 per address, 50 in all, then 1 s doubling), or the per-IP /auth limit'),
        },
      }),
    },
    '/auth/password-forgot': {
      post: op('Mail a password reset link (valid 1 hour)', { requestBody: body(s.passwordForgotBody), responses: { 200: empty200, 400: bare400 } }),
    },
    '/auth/password-reset': {
      get: op('Password reset form', { parameters: tokenQuery, responses: { 200: html('Reset form'), 400: bare400 } }),
      post: op('Set a new password with a reset token', { requestBody: body(s.passwordResetBody), responses: { 200: empty200, 400: bare400 } }),
    },
    '/auth/unregister': {
      post: op('Freeze the account (30-day grace) or delete it now', {
        security: credentials,
        requestBody: body(s.unregisterBody),
        responses: { 200: json('The customer', {}), 400: bare400, 401: envelope('Missing or invalid credentials'), 403: envelope('ACCOUNT_EXPIRED / ACCOUNT_DELETED (or bare 403 for non-admins)') },
      }),
      delete: op('Cancel a scheduled deletion', {
        security: credentials,
        responses: { 200: json('The customer, active again', {}), 400: bare400, 401: envelope('Missing or invalid credentials') },
      }),
    },
    '/auth/boot': {
      post: op('Direct token (4 h) for the resource behind a direct hash', { requestBody: body(s.bootBody), responses: { 200: json('Boot object', bootObject), 400: bare400 } }),
    },
    '/auth/boot/refresh': {
      post: op('Reissue a direct token bound to the same resource', {
        security: [{ bearer: [] }, { tokenQuery: [] }, { tokenCookie: [] }],
        requestBody: { ...body(s.bootRefreshBody), required: false },
        responses: { 200: json('Boot object', bootObject), 400: bare400, 401: envelope('Missing, expired or revoked direct token') },
      }),
    },
    '/auth/logout': {
      post: op('End the session of the login or delegate token the request carries; the cookie is expired', {
        security: [{ bearer: [] }, { tokenQuery: [] }, { tokenCookie: [] }],
        responses: {
          204: { description: 'Signed out: the token is refused from now on (docs/security.md "Sessions")' },
          401: envelope('Missing, invalid or already ended token'),
          403: envelope('DIRECT_ACCESS_NOT_SUPPORTED: an accesskey or a direct token has no session; PERMISSION_DENIED: the cookie sent from another site'),
        },
      }),
    },
    '/auth/delegate': {
      post: op('Support token (30 min) of a ProjectSuperAdmin for another customer', {
        security: [{ bearer: [] }, { tokenQuery: [] }, { tokenCookie: [] }],
        requestBody: body(s.delegateBody),
        responses: {
          200: json('Delegate token', { token: { type: 'string' }, customer_id: { type: 'string', format: 'uuid' }, expire: { type: 'string', format: 'date-time' } }),
          400: bare400,
          401: envelope('Missing or invalid credentials'),
          403: { description: 'Bare 403: not a ProjectSuperAdmin login; envelope ACCOUNT_FROZEN from the status gate' },
          404: { description: 'Bare 404: unknown or deleted customer' },
          422: { description: 'Bare 422: customer_id not a UUID, reason not 10-200 printable ASCII' },
        },
      }),
    },
  };
  for (const v of Object.values(p)) v.servers = servers;
  return p;
}
