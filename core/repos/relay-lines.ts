/**
 * relay_lines: the agent's side of a ConversationRelay call (issue 56, docs/evals.md "Agent kinds"): one
 * row per reply of the app, written by the relay (media-app/twiml/relay.ts) when its text is whole (or cut
 * short), marked interrupted when the caller cuts it; read by the evals worker through eval-reach.ts.
 * Written only for a call of the customer's (the insert selects the call by id and customer). Bounded:
 * at most RELAY_LINES_MAX rows a call (later replies are not written) and RELAY_LINE_MAX_CHARS characters
 * a row (the rest cut). What is not kept (a reply past the count, a reply's characters past the size,
 * a write that failed: `lose`) is counted in relay_line_losses, one row a call, so a reader knows the
 * agent's side is incomplete (`lossOf`). The rows go with their call (ON DELETE CASCADE) and their customer.
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

/** What of a call's replies was not kept: replies not written, and characters (theirs and those cut off kept ones). */
export interface RelayLineLoss {
  replies: number;
  chars: number;
}

export function relayLinesRepo(db: Db) {
  const lose = async (customerId: string, callId: string, loss: RelayLineLoss): Promise<void> => {
    await db.raw(
      `INSERT INTO relay_line_losses (call_id, customer_id, replies_lost, chars_lost, tm_update)
       SELECT c.id, c.customer_id, ?, ?, ? FROM calls c WHERE c.id = ? AND c.customer_id = ?
       ON CONFLICT (call_id) DO UPDATE SET replies_lost = relay_line_losses.replies_lost + excluded.replies_lost,
         chars_lost = relay_line_losses.chars_lost + excluded.chars_lost, tm_update = excluded.tm_update`,
      [loss.replies, loss.chars, clock.now(), callId, customerId],
    );
  };
  return {
    /**
     * Writes the call's next reply: `at` is when its first token came, stored as ms from the call's answer
     * (calls.tm_progressing; its creation when it has none). Its seq, or null when the call is not the
     * customer's or already has RELAY_LINES_MAX replies. `cutChars`: characters the writer already cut off
     * it. What is not kept (the reply, or its characters past RELAY_LINE_MAX_CHARS) is counted as lost.
     * One writer per call (the relay's session writes one at a time).
     */
    async add(customerId: string, callId: string, line: { text: string; at: Date; interrupted: boolean; cutChars?: number }): Promise<number | null> {
      const kept = line.text.slice(0, RELAY_LINE_MAX_CHARS);
      const cut = line.text.length - kept.length + (line.cutChars ?? 0);
      const { rows } = (await db.raw(
        `INSERT INTO relay_lines (id, customer_id, call_id, seq, text, t_ms, interrupted, tm_create)
         SELECT ?, c.customer_id, c.id, n.count + 1, ?, greatest(0, round(extract(epoch from (?::timestamptz - coalesce(c.tm_progressing, c.tm_create))) * 1000)), ?, ?
         FROM calls c, (SELECT count(*)::int AS count FROM relay_lines WHERE call_id = ?) n
         WHERE c.id = ? AND c.customer_id = ? AND n.count < ?
         RETURNING seq`,
        [newId(), kept, line.at, line.interrupted, clock.now(), callId, callId, customerId, RELAY_LINES_MAX],
      )) as { rows: { seq: number }[] };
      const seq = rows[0]?.seq ?? null;
      if (seq === null) await lose(customerId, callId, { replies: 1, chars: line.text.length + (line.cutChars ?? 0) });
      else if (cut > 0) await lose(customerId, callId, { replies: 0, chars: cut });
      return seq;
    },
    /** A reply (or part of one) that was not kept: counted against the call (the customer's call only). */
    lose,
    /** What of the call's replies was not kept, or null when all was (the customer's call only). */
    async lossOf(customerId: string, callId: string): Promise<RelayLineLoss | null> {
      const row = await db('relay_line_losses').where({ customer_id: customerId, call_id: callId }).select('replies_lost', 'chars_lost').first();
      return row ? { replies: row.replies_lost, chars: row.chars_lost } : null;
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
