/**
 * eval_call_pins: which version of an AI a simulated call runs (issue 56, docs/evals.md "Versions side
 * by side"). The evals worker writes a pin under the SIP Call-ID its caller is about to send; ai_talk on
 * the call that Call-ID made (the customer's own) takes the pin when it starts the AI the pin names,
 * marking it used, so the worker can tell a pin the call never ran. A run's pins go when it ends.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';

export function evalPinsRepo(db: Db) {
  return {
    async pin(p: { customerId: string; runId: string; sipCallId: string; aiId: string; version: number }): Promise<void> {
      await db('eval_call_pins').insert({ id: newId(), customer_id: p.customerId, run_id: p.runId, sip_call_id: p.sipCallId, ai_id: p.aiId, ai_version: p.version, tm_create: clock.now() });
    },
    /** The version pinned for this AI on this call of the customer's (marked used), or null when none is. */
    async take(customerId: string, callId: string, aiId: string): Promise<number | null> {
      const ofCall = db('calls').select('sip_call_id').where({ id: callId, customer_id: customerId });
      const [row] = (await db('eval_call_pins').where({ customer_id: customerId, ai_id: aiId }).whereIn('sip_call_id', ofCall).update({ tm_used: clock.now() }).returning('ai_version')) as {
        ai_version: number;
      }[];
      return row?.ai_version ?? null;
    },
    /** Whether ai_talk took the pin of this call. */
    async used(customerId: string, sipCallId: string): Promise<boolean> {
      const row = await db('eval_call_pins').where({ customer_id: customerId, sip_call_id: sipCallId }).select('tm_used').first();
      return !!row?.tm_used;
    },
    async dropRun(runId: string): Promise<void> {
      await db('eval_call_pins').where({ run_id: runId }).delete();
    },
  };
}
