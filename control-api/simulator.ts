/**
 * control-api's side of flow simulations (core/commands/simulate.ts): a job on the shared queue, its
 * state polled until a media-app node answers or FLOW_SIMULATE_TIMEOUT_MS passes. At most
 * SIMULATE_PER_CUSTOMER simulations of one customer wait at once (429 beyond), on top of the
 * customer's request rate limit.
 */
import { Job } from 'bullmq';
import { ApiError, REASONS, invalidArgument, rateLimited, serviceUnavailable, type Reason } from '../core/errors';
import { newId } from '../core/ids';
import {
  FLOW_SIMULATE_QUEUE, SIMULATE_MAX_JOB_BYTES, SIMULATE_PER_CUSTOMER, type SimulateJob, type SimulateJobResult,
} from '../core/commands/simulate';
import { commandBus } from './calls/bus';
import type { AppContext } from './context';

const inflightKey = (ctx: AppContext, customerId: string) => `${ctx.config.redisKeyPrefix}sim-inflight:${customerId}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runSimulation(ctx: AppContext, customerId: string, flow: SimulateJob['flow'], script: unknown): Promise<Record<string, unknown>> {
  const waitMs = ctx.config.flowSimulateTimeoutMs;
  if (Buffer.byteLength(JSON.stringify({ flow, script })) > SIMULATE_MAX_JOB_BYTES) {
    throw invalidArgument(`the flow, the flows it reaches and the script are over ${SIMULATE_MAX_JOB_BYTES} bytes together`);
  }
  const key = inflightKey(ctx, customerId);
  let running: number;
  try {
    running = await ctx.redis.incr(key);
    await ctx.redis.pexpire(key, waitMs + 5000);
  } catch {
    throw serviceUnavailable();
  }
  try {
    if (running > SIMULATE_PER_CUSTOMER) throw rateLimited('customer', 1);
    return await enqueueAndWait(ctx, { customerId, flow, script, deadline: Date.now() + waitMs }, waitMs);
  } finally {
    await ctx.redis.decr(key).catch(() => undefined);
  }
}

async function enqueueAndWait(ctx: AppContext, data: SimulateJob, waitMs: number): Promise<Record<string, unknown>> {
  const queue = commandBus(ctx).queue(FLOW_SIMULATE_QUEUE);
  // No consumer at all: say so now rather than after the wait (CLIENT LIST refused: just wait).
  const workers = await queue.getWorkersCount().catch(() => -1);
  if (workers === 0) throw serviceUnavailable('no media-app node is running the flow simulator');
  const id = newId();
  try {
    await queue.add('simulate', data, { jobId: id, attempts: 1, removeOnComplete: { age: 60 }, removeOnFail: { age: 60 } });
  } catch {
    throw serviceUnavailable();
  }
  let pause = 25;
  while (Date.now() < data.deadline) {
    await sleep(Math.min(pause, Math.max(1, data.deadline - Date.now())));
    pause = Math.min(pause * 2, 200);
    const job = await Job.fromId<SimulateJob, SimulateJobResult>(queue, id).catch(() => undefined);
    if (!job?.finishedOn) continue;
    if (job.failedReason || !job.returnvalue) throw new ApiError('INTERNAL', 'the flow simulation failed');
    return answer(job.returnvalue);
  }
  // Nobody took it in time: a node that takes it later finds its deadline passed and skips it.
  await Job.fromId(queue, id).then((j) => j?.remove(), () => undefined).catch(() => undefined);
  throw new ApiError('REQUEST_TIMEOUT', `the flow simulator gave no answer within ${waitMs} ms`);
}

function answer(r: SimulateJobResult): Record<string, unknown> {
  if (r.ok) return r.result;
  const reason: Reason = r.error.reason in REASONS ? (r.error.reason as Reason) : 'INTERNAL';
  throw new ApiError(reason, r.error.message, { details: r.error.details });
}
