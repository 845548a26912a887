// Holding an answered call for a given time IS what a long-call test tests: holdFor waits that long
// while it watches the calls' rows and the parties, and fails at once, saying what ended and when,
// if any of them ends during the hold (a row leaving `progressing`, a party's sipp exiting, which it
// does on a BYE it did not expect). Shared by test/long-calls and scripts/soak/long-calls.ts.
import type { Knex } from 'knex';

export interface HoldWatch {
  db: Knex;
  /** Calls that must stay `progressing` for the whole hold. */
  calls: string[];
  /** Parties whose end (a promise that settles when the party's scenario or process ends) fails the hold. */
  parties?: { name: string; done: Promise<unknown> }[];
  /** How often the rows are read (default 200 ms). */
  pollMs?: number;
}

interface EndedRow {
  id: string;
  status: string;
  hangup_by: string;
  hangup_reason: string;
}

/** The first call of `ids` that is not `progressing`, or null. */
export async function firstEnded(db: Knex, ids: string[]): Promise<EndedRow | null> {
  const rows = (await db('calls').whereIn('id', ids).select('id', 'status', 'hangup_by', 'hangup_reason')) as EndedRow[];
  for (const id of ids) {
    const r = rows.find((x) => x.id === id);
    if (!r) return { id, status: 'missing', hangup_by: '', hangup_reason: '' };
    if (r.status !== 'progressing') return r;
  }
  return null;
}

/**
 * Waits `ms` and fails, as soon as it happens, if a watched call leaves `progressing` or a watched
 * party ends during that time; the error says which, how far into the hold, and the hangup record.
 */
export async function holdFor(ms: number, w: HoldWatch): Promise<void> {
  const start = Date.now();
  const into = () => `${Date.now() - start} ms into a ${ms} ms hold`;
  let partyEnded: string | null = null;
  for (const p of w.parties ?? []) {
    const mark = () => (partyEnded ??= `${p.name} ended ${into()}`);
    p.done.then(mark, mark);
  }
  const before = await firstEnded(w.db, w.calls);
  if (before) throw new Error(`call ${before.id} was not progressing when the hold began: ${JSON.stringify(before)}`);
  for (;;) {
    const left = start + ms - Date.now();
    if (left <= 0) break;
    await new Promise((r) => setTimeout(r, Math.min(left, w.pollMs ?? 200)));
    const ended = await firstEnded(w.db, w.calls);
    if (ended) throw new Error(`call ${ended.id} ended ${into()}: status ${ended.status}, hangup_by '${ended.hangup_by}', hangup_reason '${ended.hangup_reason}'`);
    if (partyEnded) throw new Error(partyEnded);
  }
}
