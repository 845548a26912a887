/** Row types of core/chats/repo.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export const CHAT_TYPES = ['direct', 'group', 'talk'] as const;

export type ChatType = (typeof CHAT_TYPES)[number];

export interface ChatRow {
  id: string;
  customer_id: string;
  type: ChatType;
  name: string;
  detail: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
  member_count?: number | string;
}

export interface ParticipantRow {
  id: string;
  customer_id: string;
  chat_id: string;
  owner_type: string;
  owner_id: string;
  tm_joined: Date;
}

export interface Reaction {
  emoji: string;
  owner_type: string;
  owner_id: string;
  tm_create: string;
}

export interface ChatMessageRow {
  id: string;
  customer_id: string;
  chat_id: string;
  owner_type: string;
  owner_id: string;
  parent_id: string;
  type: 'normal' | 'system';
  text: string;
  medias: unknown[];
  metadata: { reactions: Reaction[] };
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
