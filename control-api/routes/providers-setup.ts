/**
 * POST /providers/setup (ProjectSuperAdmin): a provider from a carrier API key. For `telnyx`, the key
 * is checked (GET /balance), a credential connection (the carrier-side SIP trunk) is created with a
 * user and password made here, and a provider is written that sends to sip.telnyx.com with them
 * (core/carriers/telnyx.ts, through the egress policy; TELNYX_API_URL points elsewhere for a test
 * double). A refused key is 400 and nothing is written; a carrier that fails is 503.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { defineRoute, text, type AnyRoute } from '../route';
import { invalidArgument, serviceUnavailable } from '../../core/errors';
import { EgressFailed, EgressRefused } from '../../core/net';
import { providersRepo } from '../../core/repos/providers';
import { TELNYX_SIP_HOST, TelnyxClient, TelnyxError, telnyxApiUrl } from '../../core/carriers/telnyx';
import { ProviderSchema, show } from './providers';

const body = z.object({
  carrier: z.enum(['telnyx']),
  name: text().min(1, 'name is required'),
  detail: text(1024).optional(),
  credentials: z.object({
    api_key: z
      .string()
      .min(8, 'api_key is too short')
      .max(512)
      .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces'),
  }),
});

export const routes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/providers/setup',
    tag: 'Provider',
    summary: 'Set up a provider from a carrier API key (telnyx): the carrier-side SIP trunk and the provider record',
    permission: 'superadmin',
    body,
    response: ProviderSchema,
    handler: async ({ ctx, body }) => {
      const carrier = new TelnyxClient(telnyxApiUrl(), body.credentials.api_key, ctx.egress);
      const userName = `ov${randomBytes(8).toString('hex')}`;
      const password = randomBytes(18).toString('base64url');
      let connection;
      try {
        await carrier.validate();
        connection = await carrier.createCredentialConnection(body.name, userName, password);
      } catch (e) {
        if (e instanceof TelnyxError && e.authFailed) throw invalidArgument(`credentials.api_key: ${e.message}`, [{ field: 'credentials.api_key', issue: 'refused by the carrier' }]);
        if (e instanceof TelnyxError) throw serviceUnavailable(`carrier: ${e.message}`);
        if (e instanceof EgressRefused || e instanceof EgressFailed) throw serviceUnavailable(`carrier: ${e.message}`);
        throw e;
      }
      const p = await providersRepo(ctx.db).create({
        type: 'sip',
        hostname: TELNYX_SIP_HOST,
        tech_prefix: '',
        tech_postfix: '',
        tech_headers: {},
        transport: 'udp',
        auth_username: connection.user_name,
        auth_password: password,
        name: body.name,
        detail: body.detail ?? `telnyx credential connection ${connection.id}`,
      });
      return (await show(ctx, [p]))[0]!;
    },
  }),
];
