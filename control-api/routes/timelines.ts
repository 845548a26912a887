/**
 * /timelines/{resource_type}/{resource_id}/events and /aggregated-events (by activeflow_id or
 * call_id): the stored events, newest first. page_size up to 1000 (default 100); page_token is the
 * timestamp cursor `<RFC 3339>_<event id>`.
 */
import { z } from 'zod';
import type { Knex } from 'knex';
import { defineRoute, uuid } from '../route';
import { ApiError, invalidParameter, notFound } from '../../core/errors';
import { decodePageToken, encodePageToken } from '../../core/pagination';
import { listOf } from './schemas';
import { eventsRepo, type EventsOf } from '../../core/repos/events';
import { callsRepo } from '../../core/repos/calls';

const MAX = 1000;
const eventSchema = z.object({ timestamp: z.string(), event_type: z.string(), data: z.record(z.string(), z.unknown()) });
const pageQuery = { page_size: z.string().optional(), page_token: z.string().optional() };
const RESOURCE = { calls: 'call', conferences: 'conference', flows: 'flow', activeflows: 'activeflow' } as const;

function pageOf(q: { page_size?: string; page_token?: string }): { size: number; cursor: { ts: string; id: string | null } | null } {
  let size = 100;
  if (q.page_size !== undefined && q.page_size !== '') {
    if (!/^-?\d{1,9}$/.test(q.page_size)) throw invalidParameter('page_size', 'page_size must be an integer');
    const n = Number(q.page_size);
    size = n <= 0 || n > MAX ? MAX : n;
  }
  const cursor = q.page_token ? decodePageToken(q.page_token) : null;
  if (q.page_token && !cursor) throw invalidParameter('page_token', 'page_token is not a valid cursor');
  return { size, cursor };
}

async function run(db: Knex, of: EventsOf, q: { page_size?: string; page_token?: string }) {
  const { size, cursor } = pageOf(q);
  const rows = await eventsRepo(db).page(of, size + 1, cursor);
  const more = rows.length > size;
  const page = rows.slice(0, size);
  const last = page[page.length - 1];
  return {
    result: page.map((r) => ({ timestamp: encodePageToken(Number(r.us), r.id).split('_')[0]!, event_type: r.event_type, data: r.data })),
    next_page_token: more && last ? encodePageToken(Number(last.us), last.id) : '',
  };
}

export const routes = [
  defineRoute({
    method: 'get',
    path: '/timelines/:resource_type/:resource_id/events',
    tag: 'Timeline',
    summary: 'Events of one call, conference, flow or activeflow, newest first',
    permission: 'agent',
    params: z.object({ resource_type: z.enum(['calls', 'conferences', 'flows', 'activeflows']), resource_id: uuid() }),
    query: z.object(pageQuery),
    response: listOf(eventSchema),
    handler: async ({ ctx, auth, params, query }) => {
      return run(ctx.db, { customer_id: auth.customerId, resource: RESOURCE[params.resource_type], resource_id: params.resource_id }, query);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/aggregated-events',
    tag: 'Timeline',
    summary: 'All events of one activeflow run (by activeflow_id, or call_id → its activeflow)',
    permission: 'agent',
    query: z.object({ activeflow_id: uuid().optional(), call_id: uuid().optional(), ...pageQuery }),
    response: listOf(eventSchema),
    handler: async ({ ctx, auth, query }) => {
      if ((query.activeflow_id === undefined) === (query.call_id === undefined)) {
        throw new ApiError('MISSING_REQUEST_PARAMETER', 'give exactly one of activeflow_id or call_id', { details: [{ field: 'activeflow_id' }, { field: 'call_id' }] });
      }
      let af = query.activeflow_id;
      if (!af) {
        const call = await callsRepo(ctx.db).activeflowOf(auth.customerId, query.call_id!);
        if (call === null) throw notFound('CALL_NOT_FOUND', 'call not found');
        af = call;
      }
      return run(ctx.db, { customer_id: auth.customerId, activeflow_id: af }, query);
    },
  }),
];
