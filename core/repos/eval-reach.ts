/**
 * What an eval run reads of a call it placed (issue 56, docs/evals.md): the platform's call that its
 * SIP Call-ID made, and the messages ai_talk recorded for it (the agent's side of the transcript and
 * each turn's latency, media-app/ai/turn-latency.ts). Everything is the run's customer's only: a call
 * or conversation of another customer is never found.
 */
import type { Db } from '../db/knex';

export interface ReachedMessage {
  role: string;
  content: string;
  metadata: Record<string, unknown>;
  tm_create: Date;
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
  };
}
