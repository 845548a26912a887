/**
 * Where an eval call's two audio tracks are (docs/evals.md "Both tracks of a call"): the evals worker
 * writes them to the platform's object store (core/storage, `files`) under a key of the customer and
 * the run, and names them in the call's result by the path of the route that serves them
 * (GET /v1.0/eval_runs/{id}/audio/{file}, control-api/routes/eval-runs.ts). One place for the names, so
 * the writer and the reader cannot disagree.
 */
import { createHash } from 'node:crypto';

export const EVAL_AUDIO_TRACKS = ['caller', 'agent'] as const;
export type EvalAudioTrack = (typeof EVAL_AUDIO_TRACKS)[number];

/** A track's file name: a digest of the call's SIP Call-ID (unique per call, any characters) and the track. */
export const EVAL_AUDIO_FILE = /^[0-9a-f]{32}-(caller|agent)\.wav$/;

export function evalAudioFile(sipCallId: string, track: EvalAudioTrack): string {
  return `${createHash('sha256').update(sipCallId).digest('hex').slice(0, 32)}-${track}.wav`;
}

/** The object's key in the files store (outside the `<customer_id>/<id>` keys of storage_files). */
export function evalAudioKey(customerId: string, runId: string, file: string): string {
  return `evals/${customerId}/${runId}/${file}`;
}

/** The URL the result names: a path on the API's origin (the console plays it as it is, with its session cookie). */
export function evalAudioPath(runId: string, file: string): string {
  return `/v1.0/eval_runs/${runId}/audio/${file}`;
}

/** The object keys of every track a run's results name (what goes when the run, or its audio, does). */
export function evalAudioKeysOf(run: { id: string; customer_id: string; results: { audio?: { caller_url: string; agent_url: string } }[] }): string[] {
  const files = run.results.flatMap((r) => (r.audio ? [r.audio.caller_url, r.audio.agent_url] : [])).map((url) => url.slice(url.lastIndexOf('/') + 1));
  return [...new Set(files.filter((f) => EVAL_AUDIO_FILE.test(f)))].map((f) => evalAudioKey(run.customer_id, run.id, f));
}
