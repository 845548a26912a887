/**
 * Mirrors channel records into conversations: every SMS or email sent or received becomes a
 * conversation message in the thread between our address and theirs (created on first contact).
 */
import type { Db } from '../db/knex';
import type { Address, MessageWithTargets, TargetStatus } from '../repos/messages';
import type { EmailRow } from '../repos/emails';
import { conversationsRepo, type ConversationMessageRow, type ConversationMessageStatus, type ConversationRow } from '../repos/conversations';

export interface ThreadEntry {
  conversation: ConversationRow;
  created: boolean;
  message: ConversationMessageRow;
}

export function statusOfTarget(s: TargetStatus): ConversationMessageStatus {
  if (s === 'delivered' || s === 'received') return 'done';
  if (s === 'failed') return 'failed';
  return 'progressing';
}

/** One conversation message per target of an SMS (outbound) or for the SMS received (inbound). */
export async function threadSms(db: Db, m: MessageWithTargets): Promise<ThreadEntry[]> {
  const repo = conversationsRepo(db);
  const out: ThreadEntry[] = [];
  for (const t of m.targets) {
    const self: Address = m.direction === 'outbound' ? m.source : t.destination;
    const peer: Address = m.direction === 'outbound' ? t.destination : m.source;
    const { row, created } = await repo.ensureThread(m.customer_id, 'message', pick(self), pick(peer));
    const message = await repo.addMessage({
      customer_id: m.customer_id,
      conversation_id: row.id,
      direction: m.direction === 'outbound' ? 'outgoing' : 'incoming',
      status: statusOfTarget(t.status),
      reference_type: 'message',
      reference_id: m.id,
      source: m.source,
      destination: t.destination,
      text: m.text,
    });
    await repo.touch(row.id);
    out.push({ conversation: row, created, message });
  }
  return out;
}

/** One conversation message per destination of an outgoing email. */
export async function threadEmail(db: Db, e: EmailRow): Promise<ThreadEntry[]> {
  const repo = conversationsRepo(db);
  const out: ThreadEntry[] = [];
  for (const d of e.destinations) {
    const { row, created } = await repo.ensureThread(e.customer_id, 'email', pick(e.source), pick(d));
    const message = await repo.addMessage({
      customer_id: e.customer_id,
      conversation_id: row.id,
      direction: 'outgoing',
      status: 'progressing',
      reference_type: 'email',
      reference_id: e.id,
      source: e.source,
      destination: d,
      text: e.subject ? `${e.subject}\n\n${e.content}` : e.content,
    });
    await repo.touch(row.id);
    out.push({ conversation: row, created, message });
  }
  return out;
}

/** Conversation messages mirroring record `referenceId`, to `destination` when given. */
export async function mirroredMessages(db: Db, referenceId: string, destination?: string): Promise<ConversationMessageRow[]> {
  const all = await conversationsRepo(db).messagesByReference(referenceId);
  return destination === undefined ? all : all.filter((m) => m.destination.target === destination);
}

function pick(a: Address): Address {
  return { type: a.type, target: a.target };
}
