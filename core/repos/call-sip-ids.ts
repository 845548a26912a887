/**
 * The SIP Call-IDs of a call's legs (migration 0880): media-app records each INVITE's Call-ID
 * (every dial attempt of an outbound call); an inbound call's is also its row's sip_call_id.
 */
import type { Db } from '../db/knex';

export function callSipIdsRepo(db: Db) {
  return {
    async add(callId: string, sipCallId: string): Promise<void> {
      if (!sipCallId) return;
      await db('call_sip_ids').insert({ call_id: callId, sip_call_id: sipCallId }).onConflict(['call_id', 'sip_call_id']).ignore();
    },
    /** The Call-IDs of these calls (their rows' sip_call_id and every recorded one). */
    async of(callIds: string[]): Promise<string[]> {
      if (!callIds.length) return [];
      const rows = (await db('call_sip_ids').whereIn('call_id', callIds).select('sip_call_id')) as { sip_call_id: string }[];
      const own = (await db('calls').whereIn('id', callIds).whereNot('sip_call_id', '').select('sip_call_id')) as { sip_call_id: string }[];
      return [...new Set([...own, ...rows].map((r) => r.sip_call_id))];
    },
  };
}
