/**
 * /contact_interactions and /contact_peer_events: the customer's call, conversation and message
 * events seen from the remote party (core/workspace/peer-events.ts), found by a peer address, by all
 * addresses of a contact, or by one contact address. Raw rows: no identity resolution, no filtering
 * of internal peer types (agent, sip, conference), as the reference describes.
 */
import { z } from 'zod';
import type { Knex } from 'knex';
import { defineRoute, uuid } from '../route';
import { ApiError, notFound } from '../../core/errors';
import { listPeerEvents, type PeerFilter } from '../../core/workspace/peer-events';
import { contactAddressExists, liveContactExists } from '../../core/repos/contacts';

export const peerEventSchema = z.object({
  timestamp: z.string().nullable(),
  customer_id: z.string(),
  publisher: z.enum(['call', 'conversation', 'conversation_message']),
  event_type: z.string(),
  reference_id: z.string(),
  direction: z.string(),
  peer: z.record(z.string(), z.unknown()),
  local: z.record(z.string(), z.unknown()),
  data: z.record(z.string(), z.unknown()),
});
export const peerEventList = z.object({ result: z.array(peerEventSchema), next_page_token: z.string() });

export const interactionQuery = {
  peer_type: z.string().min(1).max(32).optional(),
  peer_target: z.string().min(1).max(320).optional(),
  contact_id: uuid().optional(),
  address_id: uuid().optional(),
  page_size: z.string().optional(),
  page_token: z.string().optional(),
};

/** The raw peer-event listings' query: one peer or one contact, no address (and no since). */
export const peerEventQuery = z.object({
  peer_type: interactionQuery.peer_type,
  peer_target: interactionQuery.peer_target,
  contact_id: interactionQuery.contact_id,
  page_size: interactionQuery.page_size,
  page_token: interactionQuery.page_token,
});

const MAX_SINCE_DAYS = 180;

/**
 * The one filter of a request. `allowSince`: with no filter, the last `since` days (default 30,
 * at most 180) of the whole history instead of an error (the service-agent listing).
 */
export async function peerFilterOf(
  db: Knex,
  customerId: string,
  q: { peer_type?: string; peer_target?: string; contact_id?: string; address_id?: string; since?: string },
  opts: { allowAddress: boolean; allowSince: boolean },
): Promise<PeerFilter> {
  if ((q.peer_type === undefined) !== (q.peer_target === undefined)) {
    throw new ApiError('MISSING_REQUEST_PARAMETER', 'peer_type and peer_target go together', { details: [{ field: q.peer_type === undefined ? 'peer_type' : 'peer_target' }] });
  }
  if (!opts.allowAddress && q.address_id !== undefined) throw new ApiError('INVALID_REQUEST_PARAMETER', 'address_id is not a filter here', { details: [{ field: 'address_id' }] });
  const given = [q.peer_type !== undefined, q.contact_id !== undefined, q.address_id !== undefined].filter(Boolean).length;
  if (given > 1) throw new ApiError('INVALID_ARGUMENT', 'give only one filter: peer_type+peer_target, contact_id or address_id', { details: [{ field: 'contact_id', issue: 'more than one filter' }] });
  if (q.peer_type !== undefined) return { peer: { type: q.peer_type, target: q.peer_target! } };
  if (q.contact_id !== undefined) {
    const id = q.contact_id.toLowerCase();
    if (!(await liveContactExists(db, customerId, id))) throw notFound('RESOURCE_NOT_FOUND', 'contact not found');
    return { contactId: id };
  }
  if (q.address_id !== undefined) {
    const id = q.address_id.toLowerCase();
    if (!(await contactAddressExists(db, customerId, id))) throw notFound('RESOURCE_NOT_FOUND', 'contact address not found');
    return { addressId: id };
  }
  if (!opts.allowSince) {
    throw new ApiError('MISSING_REQUEST_PARAMETER', opts.allowAddress ? 'give one filter: peer_type+peer_target, contact_id or address_id' : 'give one filter: contact_id or peer_type+peer_target', {
      details: [{ field: 'contact_id' }, { field: 'peer_type' }],
    });
  }
  const m = /^(\d{1,3})d$/.exec(q.since ?? '30d');
  const days = m ? Number(m[1]) : NaN;
  if (!(days >= 1 && days <= MAX_SINCE_DAYS)) throw new ApiError('INVALID_REQUEST_PARAMETER', `since: "<days>d", 1d to ${MAX_SINCE_DAYS}d`, { details: [{ field: 'since' }] });
  return { sinceDays: days };
}

export const routes = [
  defineRoute({
    method: 'get',
    path: '/contact_interactions',
    tag: 'Interaction',
    summary: 'List interactions (raw peer events of one peer, contact or contact address)',
    description: 'Exactly one filter: peer_type + peer_target, contact_id (all its addresses) or address_id.',
    permission: 'agent',
    paginated: true,
    query: z.object(interactionQuery),
    response: peerEventList,
    handler: async ({ ctx, auth, query, page }) => listPeerEvents(ctx.db, auth.customerId, await peerFilterOf(ctx.db, auth.customerId, query, { allowAddress: true, allowSince: false }), page),
  }),
  defineRoute({
    method: 'get',
    path: '/contact_peer_events',
    tag: 'Interaction',
    summary: 'List peer events (raw, unfiltered) of one peer or contact',
    description: 'Exactly one filter: contact_id (all its addresses) or peer_type + peer_target.',
    permission: 'agent',
    paginated: true,
    query: peerEventQuery,
    response: peerEventList,
    handler: async ({ ctx, auth, query, page }) => listPeerEvents(ctx.db, auth.customerId, await peerFilterOf(ctx.db, auth.customerId, query, { allowAddress: false, allowSince: false }), page),
  }),
];
