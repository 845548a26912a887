/**
 * POST /extensions/{id}/provisioning-token (admin or manager): a 64-hex token valid 10 minutes and
 * reusable inside that window, and the public URL a phone fetches its configuration from (served by
 * control-api/provisioning/router.ts at /provisioning/extension, outside /v1.0).
 */
import { z } from 'zod';
import { defineRoute, idParams } from '../route';
import { formatRfc3339 } from '../../core/time';
import { issueProvisioningToken } from '../../core/extensions/provisioning';
import { ownedExtension } from './extensions';
import { provisioningUrl } from '../provisioning/router';

export const routes = [
  defineRoute({
    method: 'post',
    path: '/extensions/:id/provisioning-token',
    tag: 'Extension',
    summary: 'Issue a provisioning token for an extension',
    description:
      'The url serves the SIP password in clear to whoever holds it until `expire` (10 minutes): treat it as a credential. ' +
      'Render it as a QR code (or use /provisioning/extension/qr.png|qr.svg?token=…). After expiry the url answers 400.',
    permission: 'manager',
    params: idParams,
    response: z.object({ token: z.string().regex(/^[0-9a-f]{64}$/), url: z.string(), expire: z.string() }),
    handler: async ({ params, auth, ctx, res }) => {
      const ext = await ownedExtension(ctx, auth.customerId, params.id);
      const { token, expire } = await issueProvisioningToken(ctx.db, ext);
      res.set('Cache-Control', 'no-store');
      return { token, url: provisioningUrl(ctx.config.publicUrl, token), expire: formatRfc3339(expire) as string };
    },
  }),
];
