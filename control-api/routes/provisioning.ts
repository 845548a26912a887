/**
 * POST /extensions/{id}/provisioning-token (admin or manager): a 64-hex token valid 10 minutes and
 * reusable inside that window, and the public URL a phone fetches its configuration from (served by
 * control-api/provisioning/router.ts at /provisioning/extension, outside /v1.0).
 * POST/GET/DELETE /customer/provisioning-url (admin): the customer's DHCP option 66 URL, a directory
 * in which the MAC of each file name selects the extension bound to it (`mac` of an extension).
 */
import { z } from 'zod';
import { defineRoute, idParams } from '../route';
import { formatRfc3339 } from '../../core/time';
import { ApiError } from '../../core/errors';
import { issueCustomerProvisioningSecret, issueProvisioningToken } from '../../core/extensions/provisioning';
import { provisioningCustomerSecretsRepo } from '../../core/repos/extensions';
import { ownedExtension } from './extensions';
import { customerProvisioningUrl, provisioningUrl } from '../provisioning/router';

const CUSTOMER_URL_DOC =
  "The customer's provisioning URL for DHCP option 66 (or a phone's provisioning server setting): a directory " +
  "in which phones fetch their vendor's files (Yealink y0000000000xx.cfg and {mac}.cfg, Polycom 000000000000.cfg, " +
  '{mac}.cfg and {mac}-phone.cfg, Grandstream cfg{mac}.xml, Cisco spa{mac}.xml / {mac}.xml, Fanvil {mac}.cfg); the MAC ' +
  'selects the extension bound to it (its `mac`), an unbound MAC gets 404. It serves SIP passwords to any holder: a ' +
  'credential, shown only when issued. POST again replaces it (the old URL answers 400).';
const notIssued = () => new ApiError('RESOURCE_NOT_FOUND', 'no customer provisioning URL is issued');

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
  defineRoute({
    method: 'post',
    path: '/customer/provisioning-url',
    tag: 'Extension',
    summary: 'Issue (or replace) the customer provisioning URL for DHCP option 66',
    description: CUSTOMER_URL_DOC,
    permission: 'admin',
    response: z.object({ url: z.string(), tm_create: z.string() }),
    handler: async ({ auth, ctx, res }) => {
      const { secret, created } = await issueCustomerProvisioningSecret(ctx.db, auth.customerId);
      res.set('Cache-Control', 'no-store');
      return { url: customerProvisioningUrl(ctx.config.publicUrl, secret), tm_create: formatRfc3339(created) as string };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/customer/provisioning-url',
    tag: 'Extension',
    summary: 'When the customer provisioning URL was issued (the URL itself is shown only by the POST)',
    permission: 'admin',
    response: z.object({ tm_create: z.string() }),
    handler: async ({ auth, ctx }) => {
      const row = await provisioningCustomerSecretsRepo(ctx.db).get(auth.customerId);
      if (!row) throw notIssued();
      return { tm_create: formatRfc3339(row.tm_create) as string };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/customer/provisioning-url',
    tag: 'Extension',
    summary: 'Revoke the customer provisioning URL (it answers 400 from now on)',
    permission: 'admin',
    response: z.object({}),
    status: 204,
    handler: async ({ auth, ctx }) => {
      if (!(await provisioningCustomerSecretsRepo(ctx.db).remove(auth.customerId))) throw notIssued();
      return undefined;
    },
  }),
];
