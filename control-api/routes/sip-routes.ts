/**
 * Routes, the outbound routing resource: customer + destination prefix -> provider, with priority.
 * customer_id may be the empty UUID (a default route for every customer); target is `all` or leading
 * digits of the E.164 destination. ProjectSuperAdmin only, like providers (routes pick platform-wide
 * providers). The order a call tries providers in is core/routing/resolve.ts.
 */
import { z } from 'zod';
import { defineRoute, idParams, text, uuid } from '../route';
import { ApiError, notFound } from '../../core/errors';
import { routesRepo, routeJson } from '../../core/repos/routes';
import { providersRepo } from '../../core/repos/providers';
import type { Db } from '../../core/db/knex';

const target = z.string().regex(/^(all|\d{1,15})$/, '"all" or 1-15 leading digits of the destination (no +)');
const priority = z.number().int().min(0).max(1_000_000);

export const RouteSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  name: z.string(),
  detail: z.string(),
  provider_id: z.string(),
  priority: z.number().int(),
  target: z.string(),
  tm_create: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});

async function assertProvider(db: Db, id: string): Promise<void> {
  if (!(await providersRepo(db).get(id))) throw new ApiError('PROVIDER_NOT_FOUND', 'provider_id: provider not found', { details: [{ field: 'provider_id' }] });
}

const routeNotFound = () => notFound('RESOURCE_NOT_FOUND', 'route not found');

export const routes = [
  defineRoute({
    method: 'post',
    path: '/routes',
    tag: 'Route',
    summary: 'Create a route (ProjectSuperAdmin)',
    permission: 'superadmin',
    body: z.object({
      customer_id: uuid().describe('the empty UUID makes a default route for every customer'),
      name: text().optional(),
      detail: text(1024).optional(),
      provider_id: uuid(),
      priority: priority.optional(),
      target,
    }),
    response: RouteSchema,
    handler: async ({ body, ctx }) => {
      await assertProvider(ctx.db, body.provider_id);
      const r = await routesRepo(ctx.db).create({
        customer_id: body.customer_id.toLowerCase(),
        name: body.name ?? '',
        detail: body.detail ?? '',
        provider_id: body.provider_id.toLowerCase(),
        priority: body.priority ?? 0,
        target: body.target,
      });
      return routeJson(r);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/routes',
    tag: 'Route',
    summary: 'List routes (ProjectSuperAdmin), optionally of one customer_id',
    permission: 'superadmin',
    paginated: true,
    query: z.object({ customer_id: uuid().optional() }),
    response: z.object({ result: z.array(RouteSchema), next_page_token: z.string() }),
    handler: async ({ query, ctx, page }) => {
      const p = await routesRepo(ctx.db).list(page, { customerId: query.customer_id?.toLowerCase() });
      return { result: p.result.map(routeJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/routes/:id',
    tag: 'Route',
    summary: 'Get a route (ProjectSuperAdmin)',
    permission: 'superadmin',
    params: idParams,
    response: RouteSchema,
    handler: async ({ params, ctx }) => {
      const r = await routesRepo(ctx.db).get(params.id);
      if (!r) throw routeNotFound();
      return routeJson(r);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/routes/:id',
    tag: 'Route',
    summary: 'Update a route (ProjectSuperAdmin); omitted fields stay unchanged',
    permission: 'superadmin',
    params: idParams,
    body: z.object({ name: text().optional(), detail: text(1024).optional(), provider_id: uuid().optional(), priority: priority.optional(), target: target.optional() }),
    response: RouteSchema,
    handler: async ({ params, body, ctx }) => {
      if (!(await routesRepo(ctx.db).get(params.id))) throw routeNotFound();
      if (body.provider_id) await assertProvider(ctx.db, body.provider_id);
      const r = await routesRepo(ctx.db).update(params.id, { ...body, ...(body.provider_id ? { provider_id: body.provider_id.toLowerCase() } : {}) });
      if (!r) throw routeNotFound();
      return routeJson(r);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/routes/:id',
    tag: 'Route',
    summary: 'Delete a route (ProjectSuperAdmin)',
    permission: 'superadmin',
    params: idParams,
    response: RouteSchema,
    handler: async ({ params, ctx }) => {
      const r = await routesRepo(ctx.db).softDelete(params.id);
      if (!r) throw routeNotFound();
      return routeJson(r);
    },
  }),
];
