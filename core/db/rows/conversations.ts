/** Row types of core/repos/conversations.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { Address } from '../../address';

export const CONVERSATION_TYPES = ['message', 'line', 'whatsapp', 'email', 'webchat'] as const;

export type ConversationType = (typeof CONVERSATION_TYPES)[number];

export type ConversationMessageDirection = 'outgoing' | 'incoming';

export type ConversationMessageStatus = 'progressing' | 'done' | 'failed';

export type ConversationReferenceType = '' | 'message' | 'line' | 'whatsapp' | 'email';

export interface ConversationRow {
  id: string;
  customer_id: string;
  owner_type: string;
  owner_id: string;
  account_id: string;
  name: string;
  detail: string;
  type: ConversationType;
  dialog_id: string;
  self: Address;
  peer: Address;
  thread_key: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}

export interface ConversationMessageRow {
  id: string;
  customer_id: string;
  conversation_id: string;
  direction: ConversationMessageDirection;
  status: ConversationMessageStatus;
  reference_type: ConversationReferenceType;
  reference_id: string;
  source: Address;
  destination: Address;
  text: string;
  medias: unknown[];
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
