/**
 * /conferencecalls: the participants of conferences. DELETE removes one that is joining or joined
 * (it moves to leaving; the hosting node completes the leave). Mute per participant is an addition
 * of ours (docs/conferences.md): the conference stops hearing it ('in') or it stops hearing the room ('out').
 */
import { z } from 'zod';
import { defineRoute, idParams } from '../route';
import { conferencecallJson, conferencecallsRepo } from '../../core/repos/conferencecalls';
import { CONFERENCECALL_STATUSES } from '../../core/conferences/model';
import { conferencecallNotFound } from '../../core/conferences/api';
import { conferenceApi } from './conferences';
import { legacyTime, listOf, uuidOut } from './schemas';

export const conferencecallSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  activeflow_id: uuidOut(),
  conference_id: uuidOut(),
  reference_type: z.enum(['call']),
  reference_id: uuidOut(),
  status: z.enum(CONFERENCECALL_STATUSES),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

const muteBody = z.object({ direction: z.enum(['in', 'out', 'both']).optional().describe('default in: the others stop hearing the participant') });

function muteRoute(on: boolean) {
  return defineRoute({
    method: on ? 'post' : 'delete',
    path: '/conferencecalls/:id/mute',
    tag: 'Conference',
    summary: on ? 'Mute a participant in its conference' : 'Unmute a participant',
    permission: 'manager',
    params: idParams,
    body: muteBody,
    response: conferencecallSchema,
    handler: async ({ ctx, auth, params, body }) => conferencecallJson(await conferenceApi(ctx).mute(auth.customerId, params.id, body?.direction ?? 'in', on)),
  });
}

export const routes = [
  defineRoute({
    method: 'get',
    path: '/conferencecalls',
    tag: 'Conference',
    summary: 'List conference participants',
    permission: 'manager',
    paginated: true,
    response: listOf(conferencecallSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await conferencecallsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(conferencecallJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/conferencecalls/:id',
    tag: 'Conference',
    summary: 'Get a conference participant',
    permission: 'manager',
    params: idParams,
    response: conferencecallSchema,
    handler: async ({ ctx, auth, params }) => {
      const row = await conferencecallsRepo(ctx.db).getOwned(auth.customerId, params.id);
      if (!row) throw conferencecallNotFound();
      return conferencecallJson(row);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/conferencecalls/:id',
    tag: 'Conference',
    summary: 'Remove (kick) a participant that is joining or joined',
    permission: 'manager',
    params: idParams,
    response: conferencecallSchema,
    handler: async ({ ctx, auth, params }) => conferencecallJson(await conferenceApi(ctx).kick(auth.customerId, params.id)),
  }),
  muteRoute(true),
  muteRoute(false),
];
