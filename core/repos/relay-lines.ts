/**
 * relay_lines: the agent's side of a ConversationRelay call (issue 56, docs/evals.md "Agent kinds"): one
 * row per reply of the app, written by the relay (media-app/twiml/relay.ts) when its text is whole (or cut
 * short), marked interrupted when the caller cuts it; read by the evals worker through eval-reach.ts.
 * Written only for a call of the customer's (the insert selects the call by id and customer). Bounded:
 * at most RELAY_LINES_MAX rows a call (later replies are not written) and RELAY_LINE_MAX_CHARS characters
 * a row (the rest cut). The rows go with their call (ON DELETE CASCADE) and their customer.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';

/** Replies kept per call: a call of 200 replies is a long conversation; beyond it nothing more is written. */
export const RELAY_LINES_MAX = 200;
/** Characters kept of a reply (an app's reply is a few sentences; a runaway one is cut here). */
export const RELAY_LINE_MAX_CHARS = 4000;

export interface RelayLine {
  seq: number;
  text: string;
  t_ms: number;
  interrupted: boolean;
}

export function relayLinesRepo(db: Db) {
  return {
    /**
     * Writes the call's next reply: `at` is when its first token came, stored as ms from the call's answer
     * (calls.tm_progressing; its creation when it has none). Its seq, or null when the call is not the
     * customer's or already has RELAY_LINES_MAX replies. One writer per call (the relay's session writes
     * one at a time).
     */
    async add(customerId: string, callId: string, line: { text: string; at: Date; interrupted: boolean }): Promise<number | null> {
      const { rows } = (await db.raw(
        `INSERT INTO relay_lines (id, customer_id, call_id, seq, text, t_ms, interrupted, tm_create)
         SELECT ?, c.customer_id, c.id, n.count + 1, ?, greatest(0, round(extract(epoch from (?::timestamptz - coalesce(c.tm_progressing, c.tm_create))) * 1000)), ?, ?
         FROM calls c, (SELECT count(*)::int AS count FROM relay_lines WHERE call_id = ?) n
         WHERE c.id = ? AND c.customer_id = ? AND n.count < ?
         RETURNING seq`,
        [newId(), line.text.slice(0, RELAY_LINE_MAX_CHARS), line.at, line.interrupted, clock.now(), callId, callId, customerId, RELAY_LINES_MAX],
      )) as { rows: { seq: number }[] };
      return rows[0]?.seq ?? null;
    },
    /** The caller cut this reply. */
    async markInterrupted(customerId: string, callId: string, seq: number): Promise<void> {
      await db('relay_lines').where({ customer_id: customerId, call_id: callId, seq }).update({ interrupted: true });
    },
    /** The call's replies in order (the customer's call only). */
    async ofCall(customerId: string, callId: string): Promise<RelayLine[]> {
      return db('relay_lines').where({ customer_id: customerId, call_id: callId }).orderBy('seq').select('seq', 'text', 't_ms', 'interrupted');
    },
  };
}
