/**
 * Agent chats ("talks"): direct (two agents), group (invited members) and talk (public channels any
 * agent of the customer may join), their participants and messages with reactions.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { ChatMessageRow, ChatRow, ChatType, ParticipantRow, Reaction } from '../db/rows/chats';
export { CHAT_TYPES, type ChatMessageRow, type ChatRow, type ChatType, type ParticipantRow, type Reaction } from '../db/rows/chats';

export function chatJson(c: ChatRow) {
  return {
    id: c.id,
    customer_id: c.customer_id,
    type: c.type,
    name: c.name,
    detail: c.detail,
    member_count: Number(c.member_count ?? 0),
    tm_create: formatLegacy(c.tm_create),
    tm_update: formatLegacy(c.tm_update),
    tm_delete: formatLegacy(c.tm_delete),
  };
}

export function participantJson(p: ParticipantRow) {
  return { id: p.id, customer_id: p.customer_id, owner_type: p.owner_type, owner_id: p.owner_id, chat_id: p.chat_id, tm_joined: formatLegacy(p.tm_joined) };
}

export function chatMessageJson(m: ChatMessageRow) {
  return {
    id: m.id,
    customer_id: m.customer_id,
    owner_type: m.owner_type,
    owner_id: m.owner_id,
    chat_id: m.chat_id,
    parent_id: m.parent_id,
    type: m.type,
    text: m.text,
    medias: m.medias ?? [],
    metadata: { reactions: m.metadata?.reactions ?? [] },
    tm_create: formatLegacy(m.tm_create),
    tm_update: formatLegacy(m.tm_update),
    tm_delete: formatLegacy(m.tm_delete),
  };
}

export function chatsRepo(db: Db) {
  const chats = () => db('talk_chats');
  const parts = () => db('talk_participants');
  const msgs = () => db('talk_messages');
  const withCount = () => chats().select('talk_chats.*', db.raw('(select count(*) from talk_participants p where p.chat_id = talk_chats.id) as member_count')).whereNull('talk_chats.tm_delete');
  return {
    async create(customerId: string, input: { type: ChatType; name?: string; detail?: string }, members: { owner_type: string; owner_id: string }[]): Promise<ChatRow> {
      return db.transaction(async (trx) => {
        const now = clock.now();
        const [c] = await trx('talk_chats')
          .insert({ id: newId(), customer_id: customerId, type: input.type, name: input.name ?? '', detail: input.detail ?? '', tm_create: now, tm_update: now })
          .returning('*');
        const seen = new Set<string>();
        for (const m of members) {
          const key = `${m.owner_type}:${m.owner_id}`;
          if (seen.has(key)) continue;
          seen.add(key);
          await trx('talk_participants').insert({ id: newId(), customer_id: customerId, chat_id: (c as ChatRow).id, owner_type: m.owner_type, owner_id: m.owner_id, tm_joined: now });
        }
        return { ...(c as ChatRow), member_count: seen.size };
      });
    },
    async get(customerId: string, id: string): Promise<ChatRow | null> {
      return ((await withCount().where('talk_chats.id', id).where('talk_chats.customer_id', customerId).first()) as ChatRow | undefined) ?? null;
    },
    /** Chats the agent is in (type filters: talk = public channels, whether joined or not). */
    async listFor(customerId: string, agentId: string, params: PageParams): Promise<Page<ChatRow>> {
      const q = withCount()
        .where('talk_chats.customer_id', customerId)
        .whereExists(db('talk_participants').whereRaw('talk_participants.chat_id = talk_chats.id').where({ owner_type: 'agent', owner_id: agentId }));
      return toPage(await paginate<ChatRow>(q, params, 'talk_chats'), (r) => r);
    },
    async listChannels(customerId: string, params: PageParams): Promise<Page<ChatRow>> {
      return toPage(await paginate<ChatRow>(withCount().where('talk_chats.customer_id', customerId).where('talk_chats.type', 'talk'), params, 'talk_chats'), (r) => r);
    },
    async update(id: string, patch: { name?: string; detail?: string }): Promise<void> {
      await chats()
        .where({ id })
        .update({ ...patch, tm_update: clock.now() });
    },
    async softDelete(id: string): Promise<void> {
      const now = clock.now();
      await chats().where({ id }).update({ tm_delete: now, tm_update: now });
    },
    async participant(chatId: string, ownerType: string, ownerId: string): Promise<ParticipantRow | null> {
      return ((await parts().where({ chat_id: chatId, owner_type: ownerType, owner_id: ownerId }).first()) as ParticipantRow | undefined) ?? null;
    },
    async participants(chatId: string): Promise<ParticipantRow[]> {
      return (await parts().where({ chat_id: chatId }).orderBy('tm_joined')) as ParticipantRow[];
    },
    async addParticipant(c: ChatRow, ownerType: string, ownerId: string): Promise<ParticipantRow | null> {
      const rows = (
        await db.raw('? on conflict (chat_id, owner_type, owner_id) do nothing returning *', [
          parts().insert({ id: newId(), customer_id: c.customer_id, chat_id: c.id, owner_type: ownerType, owner_id: ownerId, tm_joined: clock.now() }),
        ])
      ).rows as ParticipantRow[];
      return rows[0] ?? null;
    },
    async removeParticipant(chatId: string, participantId: string): Promise<ParticipantRow | null> {
      const [row] = await parts().where({ chat_id: chatId, id: participantId }).delete().returning('*');
      return (row as ParticipantRow | undefined) ?? null;
    },
    async addMessage(c: ChatRow, m: { owner_id: string; parent_id?: string; type?: 'normal' | 'system'; text: string; medias?: unknown[] }): Promise<ChatMessageRow> {
      const now = clock.now();
      const [row] = await msgs()
        .insert({
          id: newId(),
          customer_id: c.customer_id,
          chat_id: c.id,
          owner_type: 'agent',
          owner_id: m.owner_id,
          parent_id: m.parent_id ?? EMPTY_UUID,
          type: m.type ?? 'normal',
          text: m.text,
          medias: JSON.stringify(m.medias ?? []),
          metadata: JSON.stringify({ reactions: [] }),
          tm_create: now,
          tm_update: now,
        })
        .returning('*');
      return row as ChatMessageRow;
    },
    async getMessage(customerId: string, id: string): Promise<ChatMessageRow | null> {
      return ((await msgs().where({ id, customer_id: customerId }).whereNull('tm_delete').first()) as ChatMessageRow | undefined) ?? null;
    },
    async listMessages(chatId: string, params: PageParams): Promise<Page<ChatMessageRow>> {
      return toPage(await paginate<ChatMessageRow>(msgs().where({ chat_id: chatId }).whereNull('tm_delete').select('*'), params), (r) => r);
    },
    async deleteMessage(id: string): Promise<ChatMessageRow | null> {
      const now = clock.now();
      const [row] = await msgs().where({ id }).whereNull('tm_delete').update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as ChatMessageRow | undefined) ?? null;
    },
    /** Adds a reaction once per (owner, emoji); a repeat leaves the message as it is. */
    async react(id: string, r: Omit<Reaction, 'tm_create'>): Promise<ChatMessageRow | null> {
      return db.transaction(async (trx) => {
        const m = (await trx('talk_messages').where({ id }).whereNull('tm_delete').forUpdate().first()) as ChatMessageRow | undefined;
        if (!m) return null;
        const reactions = m.metadata?.reactions ?? [];
        if (reactions.some((x) => x.emoji === r.emoji && x.owner_id === r.owner_id && x.owner_type === r.owner_type)) return m;
        const metadata = { reactions: [...reactions, { ...r, tm_create: clock.now().toISOString() }] };
        const [row] = await trx('talk_messages')
          .where({ id })
          .update({ metadata: JSON.stringify(metadata), tm_update: clock.now() })
          .returning('*');
        return row as ChatMessageRow;
      });
    },
  };
}

/** The agents among a talk chat's participants (their ids). */
export async function chatAgentParticipants(db: Db, chatId: string): Promise<string[]> {
  const rows = (await db('talk_participants').where({ chat_id: chatId, owner_type: 'agent' }).select('owner_id')) as { owner_id: string }[];
  return rows.map((r) => r.owner_id);
}

/** Whether the agent is a participant of the talk chat. */
export async function isChatAgentParticipant(db: Db, chatId: string, agentId: string): Promise<boolean> {
  return !!(await db('talk_participants').where({ chat_id: chatId, owner_type: 'agent', owner_id: agentId }).first('id'));
}
