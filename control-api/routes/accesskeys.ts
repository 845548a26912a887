/** /accesskeys: the secret is returned once (create), stored hashed; expired keys are rejected at use. */
import { z } from 'zod';
import { defineRoute, idParams, text } from '../route';
import { notFound } from '../../core/errors';
import { accesskeyJson } from '../../core/repos';
import { accesskeySchema, listOf } from './schemas';
import { publishRecheck } from '../ws/guard';

const MAX_EXPIRE_SEC = 100 * 365 * 24 * 3600;

export const routes = [
  defineRoute({
    method: 'get',
    path: '/accesskeys',
    tag: 'Accesskey',
    summary: 'List access keys',
    permission: 'admin',
    paginated: true,
    response: listOf(accesskeySchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await ctx.repos.accesskeys.listByCustomer(auth.customerId, page);
      return { result: p.result.map((a) => accesskeyJson(a)), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/accesskeys',
    tag: 'Accesskey',
    summary: 'Create an access key (the token is returned only here)',
    permission: 'admin',
    body: z.strictObject({
      name: text().optional(),
      detail: text(1024).optional(),
      expire: z.number().int().min(1).max(MAX_EXPIRE_SEC).optional().describe('lifetime in seconds (default one year)'),
    }),
    response: accesskeySchema,
    handler: async ({ ctx, auth, body }) => {
      const { row, token } = await ctx.repos.accesskeys.create({ customer_id: auth.customerId, name: body.name, detail: body.detail, expireSec: body.expire });
      return accesskeyJson(row, token);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/accesskeys/:id',
    tag: 'Accesskey',
    summary: 'Get an access key',
    permission: 'admin',
    params: idParams,
    response: accesskeySchema,
    handler: async ({ ctx, auth, params }) => {
      const a = await ctx.repos.accesskeys.get(params.id, { customerId: auth.customerId });
      if (!a) throw notFound();
      return accesskeyJson(a);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/accesskeys/:id',
    tag: 'Accesskey',
    summary: 'Update an access key',
    permission: 'admin',
    params: idParams,
    body: z.strictObject({ name: text().optional(), detail: text(1024).optional() }),
    response: accesskeySchema,
    handler: async ({ ctx, auth, params, body }) => {
      const a = await ctx.repos.accesskeys.update(params.id, body, { customerId: auth.customerId });
      if (!a) throw notFound();
      return accesskeyJson(a);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/accesskeys/:id',
    tag: 'Accesskey',
    summary: 'Delete an access key',
    permission: 'admin',
    params: idParams,
    response: accesskeySchema,
    handler: async ({ ctx, auth, params, req }) => {
      const a = await ctx.repos.accesskeys.softDelete(params.id, { customerId: auth.customerId });
      if (!a) throw notFound();
      req.app.locals.credentials?.invalidateAccesskey(a.token_hash);
      await publishRecheck(ctx, a.customer_id); // sockets opened with the key close now
      return accesskeyJson(a);
    },
  }),
];
