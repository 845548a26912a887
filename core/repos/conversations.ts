/**
 * conversations (threads) and conversation_messages. A thread is keyed by channel + our address +
 * their address, so every SMS between the same two numbers (either way) lands in one conversation;
 * emails thread the same way on type email.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { Address } from './messages';
import type { ConversationMessageRow, ConversationMessageStatus, ConversationRow, ConversationType } from '../db/rows/conversations';
export {
  CONVERSATION_TYPES,
  type ConversationMessageDirection,
  type ConversationMessageRow,
  type ConversationMessageStatus,
  type ConversationReferenceType,
  type ConversationRow,
  type ConversationType,
} from '../db/rows/conversations';

export function conversationJson(c: ConversationRow) {
  return {
    id: c.id,
    customer_id: c.customer_id,
    owner_type: c.owner_type,
    owner_id: c.owner_id,
    account_id: c.account_id,
    name: c.name,
    detail: c.detail,
    type: c.type,
    dialog_id: c.dialog_id,
    self: c.self,
    peer: c.peer,
    tm_create: formatLegacy(c.tm_create),
    tm_update: formatLegacy(c.tm_update),
    tm_delete: formatLegacy(c.tm_delete),
  };
}

export function conversationMessageJson(m: ConversationMessageRow) {
  return {
    id: m.id,
    customer_id: m.customer_id,
    conversation_id: m.conversation_id,
    direction: m.direction,
    status: m.status,
    reference_type: m.reference_type,
    reference_id: m.reference_id,
    source: m.source,
    destination: m.destination,
    text: m.text,
    medias: m.medias,
    tm_create: formatLegacy(m.tm_create),
    tm_update: formatLegacy(m.tm_update),
    tm_delete: formatLegacy(m.tm_delete),
  };
}

export function threadKey(type: ConversationType, self: Address, peer: Address): string {
  const norm = (a: Address) => `${a.type}:${type === 'email' ? a.target.toLowerCase() : a.target}`;
  return `${type}|${norm(self)}|${norm(peer)}`;
}

export function conversationsRepo(db: Db) {
  const convs = () => db('conversations');
  const msgs = () => db('conversation_messages');
  return {
    /** The live thread between self and peer on this channel, created when absent (race-safe). */
    async ensureThread(customerId: string, type: ConversationType, self: Address, peer: Address): Promise<{ row: ConversationRow; created: boolean }> {
      const key = threadKey(type, self, peer);
      const existing = (await convs().where({ customer_id: customerId, thread_key: key }).whereNull('tm_delete').first()) as ConversationRow | undefined;
      if (existing) return { row: existing, created: false };
      const now = clock.now();
      const insert = convs().insert({
        id: newId(),
        customer_id: customerId,
        owner_type: '',
        owner_id: EMPTY_UUID,
        account_id: EMPTY_UUID,
        name: `${type} ${peer.target}`,
        detail: '',
        type,
        dialog_id: '',
        self: JSON.stringify(self),
        peer: JSON.stringify(peer),
        thread_key: key,
        tm_create: now,
        tm_update: now,
      });
      // The partial unique index decides a concurrent first message; the loser reads the winner's row.
      const inserted = (await db.raw('? on conflict (customer_id, thread_key) where tm_delete is null do nothing returning *', [insert])).rows as ConversationRow[];
      if (inserted[0]) return { row: inserted[0], created: true };
      const row = (await convs().where({ customer_id: customerId, thread_key: key }).whereNull('tm_delete').first()) as ConversationRow;
      return { row, created: false };
    },
    async getOwned(customerId: string, id: string): Promise<ConversationRow | null> {
      return ((await convs().where({ id, customer_id: customerId }).whereNull('tm_delete').first()) as ConversationRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams, filter: { owner_id?: string; type?: string; account_id?: string } = {}): Promise<Page<ConversationRow>> {
      const q = convs().where({ customer_id: customerId }).whereNull('tm_delete').select('*');
      if (filter.owner_id) q.where({ owner_id: filter.owner_id });
      if (filter.type) q.where('type', filter.type);
      if (filter.account_id) q.where({ account_id: filter.account_id });
      return toPage(await paginate<ConversationRow>(q, params), (r) => r);
    },
    async update(id: string, patch: Partial<Pick<ConversationRow, 'owner_type' | 'owner_id' | 'name' | 'detail'>>): Promise<ConversationRow | null> {
      const [row] = await convs()
        .where({ id })
        .whereNull('tm_delete')
        .update({ ...patch, tm_update: clock.now() })
        .returning('*');
      return (row as ConversationRow | undefined) ?? null;
    },
    async touch(id: string): Promise<void> {
      await convs().where({ id }).update({ tm_update: clock.now() });
    },
    async addMessage(input: Omit<ConversationMessageRow, 'id' | 'tm_create' | 'tm_update' | 'tm_delete' | 'medias'> & { medias?: unknown[] }): Promise<ConversationMessageRow> {
      const now = clock.now();
      const [row] = await msgs()
        .insert({
          ...input,
          id: newId(),
          source: JSON.stringify(input.source),
          destination: JSON.stringify(input.destination),
          medias: JSON.stringify(input.medias ?? []),
          tm_create: now,
          tm_update: now,
        })
        .returning('*');
      return row as ConversationMessageRow;
    },
    async listMessages(conversationId: string, params: PageParams): Promise<Page<ConversationMessageRow>> {
      const q = msgs().where({ conversation_id: conversationId }).whereNull('tm_delete').select('*');
      return toPage(await paginate<ConversationMessageRow>(q, params), (r) => r);
    },
    /** Messages that mirror a channel record (an SMS, an email). */
    async messagesByReference(referenceId: string): Promise<ConversationMessageRow[]> {
      return (await msgs().where({ reference_id: referenceId }).whereNull('tm_delete')) as ConversationMessageRow[];
    },
    async setMessageStatus(id: string, status: ConversationMessageStatus): Promise<ConversationMessageRow | null> {
      const [row] = await msgs().where({ id }).update({ status, tm_update: clock.now() }).returning('*');
      return (row as ConversationMessageRow | undefined) ?? null;
    },
  };
}

/** The owner of a conversation, deleted or not ('' when there is none): whom its events concern. */
export async function conversationOwnerOf(db: Db, conversationId: string): Promise<string> {
  const row = (await db('conversations').where({ id: conversationId }).first('owner_id')) as { owner_id: string } | undefined;
  return row?.owner_id ?? '';
}
