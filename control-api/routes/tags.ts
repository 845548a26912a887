/** /tags: customer labels (names unique per customer, case-insensitive); delete is soft and detaches it from contacts. */
import { z } from 'zod';
import { defineRoute, idParams, text } from '../route';
import { alreadyExists, notFound } from '../../core/errors';
import { tagsRepo, tagJson } from '../../core/repos/tags';
import { listOf } from './schemas';

const tagSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  name: z.string(),
  detail: z.string(),
  tm_create: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});
const missing = () => notFound('RESOURCE_NOT_FOUND', 'tag not found');
const tag = 'Tag';

export const routes = [
  defineRoute({
    method: 'post',
    path: '/tags',
    tag,
    summary: 'Create a tag',
    permission: 'manager',
    body: z.object({ name: z.string().trim().min(1).max(255), detail: text(1024).optional() }),
    response: tagSchema,
    handler: async ({ ctx, auth, body }) => {
      const r = await tagsRepo(ctx.db).create(auth.customerId, body);
      if (r === 'duplicate') throw alreadyExists('a tag with this name exists');
      return tagJson(r);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/tags',
    tag,
    summary: 'List tags',
    permission: 'agent',
    paginated: true,
    response: listOf(tagSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await tagsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(tagJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/tags/:id',
    tag,
    summary: 'Get a tag',
    permission: 'agent',
    params: idParams,
    response: tagSchema,
    handler: async ({ ctx, auth, params }) => {
      const t = await tagsRepo(ctx.db).get(auth.customerId, params.id);
      if (!t) throw missing();
      return tagJson(t);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/tags/:id',
    tag,
    summary: 'Update a tag',
    permission: 'manager',
    params: idParams,
    body: z.object({ name: z.string().trim().min(1).max(255).optional(), detail: text(1024).optional() }),
    response: tagSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const r = await tagsRepo(ctx.db).update(auth.customerId, params.id, body);
      if (r === 'duplicate') throw alreadyExists('a tag with this name exists');
      if (!r) throw missing();
      return tagJson(r);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/tags/:id',
    tag,
    summary: 'Delete a tag (soft)',
    permission: 'manager',
    params: idParams,
    response: tagSchema,
    handler: async ({ ctx, auth, params }) => {
      const t = await tagsRepo(ctx.db).softDelete(auth.customerId, params.id);
      if (!t) throw missing();
      return tagJson(t);
    },
  }),
];
