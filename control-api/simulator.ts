/**
 * control-api's side of flow simulations (core/commands/simulate.ts): a job on the shared queue, its
 * answer taken from the queue's events (BullMQ QueueEvents: the node's 'completed' or 'failed') the
 * moment the node gives it, or 503 once FLOW_SIMULATE_TIMEOUT_MS passes. Nothing polls the job. At most
 * SIMULATE_PER_CUSTOMER simulations of one customer wait at once (429 beyond), on top of the
 * customer's request rate limit.
 */
import { Job, type QueueEvents } from 'bullmq';
import { ApiError, REASONS, invalidArgument, rateLimited, serviceUnavailable, type Reason } from '../core/errors';
import { newId } from '../core/ids';
import { FLOW_SIMULATE_QUEUE, SIMULATE_MAX_JOB_BYTES, SIMULATE_PER_CUSTOMER, type SimulateJob, type SimulateJobResult } from '../core/commands/simulate';
import { commandBus } from './calls/bus';
import type { AppContext } from './context';

const inflightKey = (ctx: AppContext, customerId: string) => `${ctx.config.redisKeyPrefix}sim-inflight:${customerId}`;

/** How a job ended, as its queue's events tell: its return value, its failure, or no word in time. */
type Outcome = { t: 'completed'; value: unknown } | { t: 'failed' } | { t: 'timeout' };

/** The outcome of job `id`, from the queue's events; listening starts now (before the job is added). */
function outcomeOf(events: QueueEvents, id: string, waitMs: number): { promise: Promise<Outcome>; cancel(): void } {
  let cancel = (): void => undefined;
  const promise = new Promise<Outcome>((resolve) => {
    const onCompleted = (a: { jobId: string; returnvalue: unknown }) => a.jobId === id && finish({ t: 'completed', value: a.returnvalue });
    const onFailed = (a: { jobId: string }) => a.jobId === id && finish({ t: 'failed' });
    const timer = setTimeout(() => finish({ t: 'timeout' }), Math.max(1, waitMs));
    function finish(o: Outcome): void {
      clearTimeout(timer);
      events.off('completed', onCompleted);
      events.off('failed', onFailed);
      resolve(o);
    }
    events.on('completed', onCompleted);
    events.on('failed', onFailed);
    cancel = () => finish({ t: 'timeout' });
  });
  return { promise, cancel };
}

function isSimulateJobResult(v: unknown): v is SimulateJobResult {
  if (typeof v !== 'object' || v === null) return false;
  const ok: unknown = Reflect.get(v, 'ok');
  if (ok === true) return typeof Reflect.get(v, 'result') === 'object';
  const error: unknown = Reflect.get(v, 'error');
  return ok === false && typeof error === 'object' && error !== null && typeof Reflect.get(error, 'reason') === 'string';
}

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
  const bus = commandBus(ctx);
  const queue = bus.queue(FLOW_SIMULATE_QUEUE);
  // No consumer at all: say so now rather than after the wait (CLIENT LIST refused: just wait).
  const workers = await queue.getWorkersCount().catch(() => -1);
  if (workers === 0) throw serviceUnavailable('no media-app node is running the flow simulator');
  const events = await bus.queueEvents(FLOW_SIMULATE_QUEUE);
  const id = newId();
  const outcome = outcomeOf(events, id, data.deadline - Date.now());
  try {
    await queue.add('simulate', data, { jobId: id, attempts: 1, removeOnComplete: { age: 60 }, removeOnFail: { age: 60 } });
  } catch {
    outcome.cancel();
    throw serviceUnavailable();
  }
  const o = await outcome.promise;
  if (o.t === 'completed' && isSimulateJobResult(o.value)) return answer(o.value);
  if (o.t !== 'timeout') throw new ApiError('INTERNAL', 'the flow simulation failed');
  // Nobody took it in time: a node that takes it later finds its deadline passed and skips it.
  await Job.fromId(queue, id)
    .then(
      (j) => j?.remove(),
      () => undefined,
    )
    .catch(() => undefined);
  throw new ApiError('REQUEST_TIMEOUT', `the flow simulator gave no answer within ${waitMs} ms`);
}

function answer(r: SimulateJobResult): Record<string, unknown> {
  if (r.ok) return r.result;
  const reason: Reason = r.error.reason in REASONS ? (r.error.reason as Reason) : 'INTERNAL';
  throw new ApiError(reason, r.error.message, { details: r.error.details });
}
