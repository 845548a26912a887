/**
 * What an eval run reads of a call it placed (issue 56, docs/evals.md): the platform's call that its
 * SIP Call-ID made, and the messages ai_talk recorded for it (the agent's side of the transcript and
 * each turn's latency, media-app/ai/turn-latency.ts), or the replies a ConversationRelay app sent on it. Everything is the run's customer's only: a call
 * or conversation of another customer is never found.
 */
import type { Db } from '../db/knex';
import { relayLinesRepo, type RelayLine, type RelayLineLoss } from './relay-lines';

export interface ReachedMessage {
  role: string;
  content: string;
  metadata: Record<string, unknown>;
  tm_create: Date;
}

/** What the call's record says of its end and what it was connected to. */
export interface ReachedCallEnd {
  hangup_by: string;
  hangup_reason: string;
  /** the legs dialled for the call (a connect, ai_talk's connect_call): where each went, whether it answered */
  connected: { id: string; destination: { type?: string; target?: string }; answered: boolean }[];
  /** the transfers of the call (it was the transferer) */
  transfers: { id: string; type: string; status: string; transferee_addresses: { type?: string; target?: string }[] }[];
}

export function evalReachRepo(db: Db) {
  return {
    /** The customer's call whose inbound INVITE had this Call-ID, or null. */
    async callBySipCallId(customerId: string, sipCallId: string): Promise<{ id: string; status: string } | null> {
      const row = await db('calls').where({ customer_id: customerId, sip_call_id: sipCallId }).select('id', 'status').first();
      return row ?? null;
    },
    /** The statuses of the AI conversations on this call (ai_talk writes `terminated` when it is done). */
    async aicallStatuses(customerId: string, callId: string): Promise<string[]> {
      const rows = await db('aicalls').where({ customer_id: customerId, reference_type: 'call', reference_id: callId }).select('status');
      return rows.map((r) => r.status);
    },
    /** The aimessages of every AI conversation on this call, oldest first. */
    async aiMessages(customerId: string, callId: string): Promise<ReachedMessage[]> {
      const aicalls = db('aicalls').select('id').where({ customer_id: customerId, reference_type: 'call', reference_id: callId });
      return db('aimessages').where({ customer_id: customerId }).whereIn('aicall_id', aicalls).whereNull('tm_delete').orderBy('tm_create').select('role', 'content', 'metadata', 'tm_create');
    },
    /** The replies a ConversationRelay app sent on this call, in order (relay_lines, written by the relay). */
    async relayLines(customerId: string, callId: string): Promise<RelayLine[]> {
      return relayLinesRepo(db).ofCall(customerId, callId);
    },
    /** What of those replies was not kept (relay_line_losses), or null when all was. */
    async relayLoss(customerId: string, callId: string): Promise<RelayLineLoss | null> {
      return relayLinesRepo(db).lossOf(customerId, callId);
    },
    /** The assistant messages with tool calls on this call and the tool messages with their results (tool_call_id), oldest first (as ai_talk recorded them). */
    async toolCalls(customerId: string, callId: string): Promise<{ role: string; tool_calls: unknown[] | null; tool_call_id: string; content: string | null; tm_create: Date }[]> {
      const aicalls = db('aicalls').select('id').where({ customer_id: customerId, reference_type: 'call', reference_id: callId });
      return db('aimessages')
        .where({ customer_id: customerId })
        .whereIn('aicall_id', aicalls)
        .whereNull('tm_delete')
        .whereRaw("(role = 'tool' or (role = 'assistant' and jsonb_array_length(coalesce(tool_calls, '[]'::jsonb)) > 0))")
        .orderBy('tm_create')
        .select('role', 'tool_calls', 'tool_call_id', 'content', 'tm_create');
    },
    /** Who ended the call and what it was connected or transferred to; null when the call is not the customer's. */
    async callEnd(customerId: string, callId: string): Promise<ReachedCallEnd | null> {
      const call = await db('calls').where({ customer_id: customerId, id: callId }).select('hangup_by', 'hangup_reason', 'chained_call_ids').first();
      if (!call) return null;
      const chained = (call.chained_call_ids ?? []) as string[];
      const legs = chained.length ? await db('calls').where({ customer_id: customerId }).whereIn('id', chained).orderBy('tm_create').select('id', 'destination', 'tm_progressing') : [];
      const connected = legs.map((l) => ({ id: l.id, destination: l.destination, answered: l.tm_progressing !== null }));
      const transfers = await db('transfers')
        .where({ customer_id: customerId, transferer_call_id: callId })
        .whereNull('tm_delete')
        .orderBy('tm_create')
        .select('id', 'type', 'status', 'transferee_addresses');
      return { hangup_by: call.hangup_by, hangup_reason: call.hangup_reason, connected, transfers };
    },
    /** The AI configuration the first ai_talk on this call ran (its id), or null: no ai_talk, or a team's. */
    async aiOfCall(customerId: string, callId: string): Promise<{ assistance_type: string; assistance_id: string; current_member_id: string | null } | null> {
      const row = await db('aicalls')
        .where({ customer_id: customerId, reference_type: 'call', reference_id: callId })
        .orderBy('tm_create')
        .select('assistance_type', 'assistance_id', 'current_member_id')
        .first();
      return row ?? null;
    },
  };
}
