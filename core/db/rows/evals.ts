/** Row types of core/repos/eval-scenarios.ts and eval-runs.ts, declared apart so core/db/tables.ts imports no repository. */
import type { EvalCallResult, EvalCaller, EvalCheck, EvalRunStatus, EvalTarget } from '../../evals/schema';

export interface EvalScenarioRow {
  id: string;
  customer_id: string;
  name: string;
  target: EvalTarget;
  caller: EvalCaller;
  checks: EvalCheck[];
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}

/** A scenario as a run keeps it (its id, name and content when the run was made). */
export type EvalRunScenario = Pick<EvalScenarioRow, 'id' | 'name' | 'target' | 'caller' | 'checks'>;

export interface EvalRunRow {
  id: string;
  customer_id: string;
  status: EvalRunStatus;
  scenarios: EvalRunScenario[];
  calls: number;
  concurrency: number;
  results: EvalCallResult[];
  error: string;
  claimed_by: string | null;
  /** versions side by side (issue 56): the AI whose versions the run's calls pin, and the version numbers ([] for none) */
  ai_id: string | null;
  versions: number[];
  /** an earlier run this one is compared with */
  baseline_run_id: string | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_end: Date | null;
  /** deleted (DELETE /eval_runs/{id}): no longer listed nor read */
  tm_delete: Date | null;
  /** its calls' audio was queued for deletion (eval_audio_deletions): at its deletion or past the retention */
  tm_audio_removed: Date | null;
}

/** An object of an eval run's call audio still to delete from the files store (core/repos/eval-audio.ts). */
export interface EvalAudioDeletionRow {
  id: string;
  key: string;
  run_id: string;
  reason: string;
  attempts: number;
  last_error: string;
  tm_create: Date;
  tm_update: Date | null;
}

/** Which version of an AI a simulated call's ai_talk runs (eval_call_pins): by the SIP Call-ID its caller sent. */
export interface EvalCallPinRow {
  id: string;
  customer_id: string;
  run_id: string;
  sip_call_id: string;
  ai_id: string;
  ai_version: number;
  tm_create: Date;
  /** when ai_talk ran the pinned version on the call; null: not (yet) */
  tm_used: Date | null;
}

/** One reply of a ConversationRelay app on a call (relay_lines), as the relay wrote it (core/repos/relay-lines.ts). */
export interface RelayLineRow {
  id: string;
  customer_id: string;
  call_id: string;
  /** the call's replies in order, from 1 */
  seq: number;
  text: string;
  /** ms from the call's answer to the reply's first token */
  t_ms: number;
  /** the caller cut it (barge-in) before all of it was said */
  interrupted: boolean;
  tm_create: Date;
}

/** What of a ConversationRelay app's replies on a call was not kept in relay_lines (core/repos/relay-lines.ts). */
export interface RelayLineLossRow {
  call_id: string;
  customer_id: string;
  /** replies not written (past RELAY_LINES_MAX, or their write failed) */
  replies_lost: number;
  /** their characters and those cut off a reply past RELAY_LINE_MAX_CHARS */
  chars_lost: number;
  tm_update: Date;
}
