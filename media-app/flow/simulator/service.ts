/**
 * The flow simulator as a service of a media-app node: consumes the shared simulate queue
 * (core/commands/simulate.ts), runs each job with simulate() and returns the result as the job's
 * value. Bounded per job: the node's flow limits (a script may lower them, never raise them), one
 * hour of virtual time, SIMULATE_MAX_REAL_MS of real time, SIMULATE_MAX_TIMELINE timeline entries;
 * one job at a time per node. No HTTP is sent (sim-http.ts): fetch and webhook_send get the egress
 * policy's verdict on their URL and the script's canned answers.
 */
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { isApiError } from '../../../core/errors';
import { simScriptSchema } from '../../../core/flow/sim-script';
import type { EgressPolicy } from '../../../core/net';
import { FLOW_SIMULATE_QUEUE, SIMULATE_MAX_REAL_MS, SIMULATE_MAX_TIMELINE, type SimulateJob, type SimulateJobResult } from '../../../core/commands/simulate';
import { DEFAULT_LIMITS } from '../limits';
import { simulate } from './simulate';

const MAX_VIRTUAL_MS = 3_600_000;

export interface SimulatorServiceOptions {
  redisUrl: string;
  /** REDIS_KEY_PREFIX (BullMQ's prefix is `${keyPrefix}bull`, as for every command queue). */
  keyPrefix: string;
  egress: EgressPolicy;
  logger: Pick<Logger, 'warn'>;
}

/** One simulation job: the result, or the API error of a bad flow or script. */
export async function runSimulateJob(job: SimulateJob, egress: EgressPolicy): Promise<SimulateJobResult> {
  if (Date.now() > job.deadline) return { ok: false, error: { reason: 'REQUEST_TIMEOUT', message: 'nobody waits for this simulation any more' } };
  try {
    const parsed = simScriptSchema.safeParse(job.script ?? {});
    // an invalid script: simulate() reports it in the API's words
    const script = parsed.success ? bounded(parsed.data) : job.script;
    const r = await simulate(job.flow, script, { sendHttp: false, egress, realTimeLimitMs: SIMULATE_MAX_REAL_MS, customerId: job.customerId });
    const cut = r.timeline.length > SIMULATE_MAX_TIMELINE;
    const result: Record<string, unknown> = { ...r, timeline: cut ? r.timeline.slice(0, SIMULATE_MAX_TIMELINE) : r.timeline };
    if (cut) result.timeline_truncated = true;
    return { ok: true, result };
  } catch (e) {
    if (!isApiError(e)) throw e;
    return { ok: false, error: { reason: e.reason, message: e.message, details: e.details } };
  }
}

/** The script with its limits held to the node's. */
function bounded<S extends { limits?: Partial<Record<'maxExecutedActions' | 'maxLoopCount' | 'maxCompleteChain', number>>; max_ms?: number }>(s: S): S {
  const l = s.limits ?? {};
  return {
    ...s,
    limits: {
      maxExecutedActions: Math.min(l.maxExecutedActions ?? DEFAULT_LIMITS.maxExecutedActions, DEFAULT_LIMITS.maxExecutedActions),
      maxLoopCount: Math.min(l.maxLoopCount ?? DEFAULT_LIMITS.maxLoopCount, DEFAULT_LIMITS.maxLoopCount),
      maxCompleteChain: Math.min(l.maxCompleteChain ?? DEFAULT_LIMITS.maxCompleteChain, DEFAULT_LIMITS.maxCompleteChain),
    },
    max_ms: Math.min(s.max_ms ?? MAX_VIRTUAL_MS, MAX_VIRTUAL_MS),
  };
}

export interface SimulatorService {
  close(): Promise<void>;
}

export function startSimulatorService(opts: SimulatorServiceOptions): SimulatorService {
  const connection = new Redis(opts.redisUrl, { maxRetriesPerRequest: null });
  connection.on('error', () => undefined); // the worker reports trouble once, below
  const worker = new Worker<SimulateJob, SimulateJobResult>(
    FLOW_SIMULATE_QUEUE,
    async (job: Job<SimulateJob>) => {
      try {
        return await runSimulateJob(job.data, opts.egress);
      } catch (e) {
        opts.logger.warn({ err: (e as Error).message, job: job.id }, 'flow simulation failed');
        throw e;
      }
    },
    { connection, prefix: `${opts.keyPrefix}bull`, concurrency: 1 },
  );
  worker.on('error', (err) => opts.logger.warn({ err: err.message }, 'flow simulator queue error'));
  return {
    async close() {
      await worker.close();
      connection.disconnect();
    },
  };
}
