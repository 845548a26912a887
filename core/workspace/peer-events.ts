/**
 * Peer events (the `peer_events` view, migration 0761): stored call, conversation and conversation
 * message events projected onto who the remote party was (peer) and which of our addresses it
 * reached (local). /contact_interactions and /contact_peer_events answer with these rows as they are.
 */
import type { Knex } from 'knex';
import { formatRfc3339 } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { PeerEventRow } from '../db/rows/workspace-peer-events';
export type { PeerEventRow } from '../db/rows/workspace-peer-events';

/** The reference's TimelineManagerPeerEvent. */
export function peerEventJson(r: PeerEventRow) {
  return {
    timestamp: formatRfc3339(r.tm_create),
    customer_id: r.customer_id,
    publisher: r.publisher,
    event_type: r.event_type,
    reference_id: r.reference_id,
    direction: r.direction,
    peer: r.peer,
    local: r.local,
    data: r.data,
  };
}

export type PeerFilter = { peer: { type: string; target: string } } | { contactId: string } | { addressId: string } | { sinceDays: number };

/** Only the rows an agent may see: events of its calls and conversations (and their messages). */
export interface PeerReach {
  callIds: Knex.QueryBuilder;
  conversationIds: Knex.QueryBuilder;
}

export async function listPeerEvents(db: Knex, customerId: string, filter: PeerFilter, page: PageParams, reach?: PeerReach): Promise<Page<ReturnType<typeof peerEventJson>>> {
  const inner = db('peer_events')
    .where({ customer_id: customerId })
    .select('id', 'customer_id', 'event_type', 'publisher', 'reference_id', 'direction', 'peer', 'local', 'data', db.raw('"timestamp" as tm_create'));
  // Addresses compare case-insensitively (emails); tel targets are E.164 on both sides.
  const PEER_IN = `(peer->>'type', lower(peer->>'target')) in (select type, lower(target) from contact_addresses where customer_id = ? and`;
  if ('peer' in filter) inner.whereRaw(`peer->>'type' = ? and lower(peer->>'target') = lower(?)`, [filter.peer.type, filter.peer.target]);
  else if ('contactId' in filter) inner.whereRaw(`${PEER_IN} contact_id = ?)`, [customerId, filter.contactId]);
  else if ('addressId' in filter) inner.whereRaw(`${PEER_IN} id = ?)`, [customerId, filter.addressId]);
  else inner.whereRaw(`"timestamp" >= now() - make_interval(days => ?)`, [filter.sinceDays]);
  // A subquery binding is parenthesised by knex: `in ?` reads `in (select ...)`.
  if (reach) {
    inner.where(
      (w) =>
        void w
          .where((c) => void c.where({ publisher: 'call' }).whereRaw('reference_id::uuid in ?', [reach.callIds]))
          .orWhere((c) => void c.where({ publisher: 'conversation' }).whereRaw('reference_id::uuid in ?', [reach.conversationIds]))
          .orWhere((c) => void c.where({ publisher: 'conversation_message' }).whereRaw(`(data->>'conversation_id')::uuid in ?`, [reach.conversationIds])),
    );
  }
  const q = db.from(inner.as('pe')).select('*');
  return toPage(await paginate<PeerEventRow>(q, page), peerEventJson);
}
