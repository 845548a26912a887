/**
 * Flow simulations, control-api → media-app (POST /flows/{id}/simulate, /flows/simulate): one shared
 * BullMQ queue every media-app node consumes (media-app/flow/simulator/service.ts). control-api puts
 * a job and waits for its 'completed' or 'failed' queue event until `deadline` (FLOW_SIMULATE_TIMEOUT_MS); the node runs the production flow runner on a virtual
 * call and returns the result as the job's return value. A job whose deadline passed is not run.
 */
export const FLOW_SIMULATE_QUEUE = 'media-app-flow-simulate';

/** Simulations of one customer running at once (over: 429). */
export const SIMULATE_PER_CUSTOMER = 2;
/** Most timeline entries a result carries (the rest is cut, `timeline_truncated` set). */
export const SIMULATE_MAX_TIMELINE = 2000;
/** Largest job (the flow, the flows it reaches and the script, as JSON): 400 beyond. */
export const SIMULATE_MAX_JOB_BYTES = 2 * 1024 * 1024;
/** Real time one simulation may take on a node before it is stopped (ms). */
export const SIMULATE_MAX_REAL_MS = 5_000;

export interface SimulateJob {
  customerId: string;
  flow: { id?: string; actions: unknown[]; on_complete_flow_id?: string };
  /** The script, already validated by control-api with core/flow/sim-script.ts (media-app checks again). */
  script: unknown;
  /** Epoch ms after which nobody waits for the answer any more. */
  deadline: number;
}

/** What a node answers: the simulation, or the API error it raised (an invalid flow or script). */
export type SimulateJobResult = { ok: true; result: Record<string, unknown> } | { ok: false; error: { reason: string; message: string; details?: Record<string, unknown>[] } };
