/** /campaigncalls: one per dial attempt of a campaign, read-only but for deleting a finished one. */
import { z } from 'zod';
import { defineRoute, idParams, orMissing, uuid } from '../route';
import { notFound, stateInvalid } from '../../core/errors';
import { campaigncallJson, campaigncallsRepo } from '../../core/repos/campaigncalls';
import { listOf } from './schemas';
import { campaigncallSchema, publish } from '../campaigns/schemas';

const tag = 'Campaign';
const missing = () => notFound('RESOURCE_NOT_FOUND', 'campaigncall not found');

export const routes = [
  defineRoute({
    method: 'get',
    path: '/campaigncalls',
    tag,
    summary: 'List campaign calls (optionally of one campaign)',
    permission: 'manager',
    paginated: true,
    query: z.object({ campaign_id: uuid().optional(), page_size: z.unknown().optional(), page_token: z.unknown().optional() }),
    response: listOf(campaigncallSchema),
    handler: async ({ ctx, auth, page, query }) => {
      const p = await campaigncallsRepo(ctx.db).list(auth.customerId, page, query.campaign_id);
      return { result: p.result.map(campaigncallJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/campaigncalls/:id',
    tag,
    summary: 'Get a campaign call',
    permission: 'manager',
    params: idParams,
    response: campaigncallSchema,
    handler: async ({ ctx, auth, params }) => {
      const cc = await orMissing(campaigncallsRepo(ctx.db).get(auth.customerId, params.id), missing);
      return campaigncallJson(cc);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/campaigncalls/:id',
    tag,
    summary: 'Delete a finished campaign call (soft)',
    permission: 'manager',
    params: idParams,
    response: campaigncallSchema,
    handler: async ({ ctx, auth, params }) => {
      const cc = await orMissing(campaigncallsRepo(ctx.db).get(auth.customerId, params.id), missing);
      if (cc.status !== 'done') throw stateInvalid(`the campaign call is ${cc.status}; it can be deleted once done`);
      const json = campaigncallJson(await orMissing(campaigncallsRepo(ctx.db).softDelete(auth.customerId, params.id), missing));
      await publish(ctx, 'campaigncall_deleted', json);
      return json;
    },
  }),
];
