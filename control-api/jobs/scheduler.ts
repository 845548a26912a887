// BullMQ repeatable jobs: the account lifecycle pass and the Twilio alerts retention pass
// (alerts-retention.ts). One job scheduler per queue, so several control-api copies may all start them:
// BullMQ keeps a single schedule and hands each run to one worker. The schedule's timer is BullMQ's,
// owned by the queue and worker each start opens; close() closes both (main.ts on shutdown).
import { Queue, Worker } from 'bullmq';
import { bullConnection } from '../bull-connection';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { runLifecyclePass, type LifecyclePassResult } from './account-lifecycle';

export const LIFECYCLE_QUEUE = 'account-lifecycle';
const SCHEDULER_ID = 'account-lifecycle-pass';

export interface LifecycleSchedulerOptions {
  db: Knex;
  /** ioredis connection options or URL for BullMQ (it opens its own connections). */
  redisUrl: string;
  /** BullMQ key prefix, so several installations (or test runs) can share one Redis. */
  prefix?: string;
  /** How often a pass runs; the lifecycle windows are hours and days, so minutes are plenty. */
  everyMs?: number;
  log?: Logger;
  onPass?: (r: LifecyclePassResult) => void;
  /** Only these customers (tests sharing a database); all accounts when absent. */
  scope?: readonly string[];
}

export interface LifecycleScheduler {
  close(): Promise<void>;
}

export interface RepeatingJob<R> {
  queue: string;
  schedulerId: string;
  /** Each run's job name. */
  jobName: string;
  redisUrl: string;
  prefix?: string;
  everyMs: number;
  /** One pass; what it returns is the job's result. */
  run: () => Promise<R>;
  log?: Logger;
}

/** Runs `run` every `everyMs` on one of the control-api copies; close() stops the schedule's worker and queue. */
export async function startRepeatingJob<R>(o: RepeatingJob<R>): Promise<LifecycleScheduler> {
  const connection = bullConnection(o.redisUrl);
  const prefix = o.prefix ?? 'bull';
  const queue = new Queue(o.queue, { connection, prefix });
  await queue.upsertJobScheduler(o.schedulerId, { every: o.everyMs }, { name: o.jobName, opts: { removeOnComplete: 100, removeOnFail: 100 } });
  const worker = new Worker(o.queue, o.run, { connection, prefix, concurrency: 1 });
  worker.on('failed', (_job, err) => o.log?.error({ err, queue: o.queue }, 'periodic job failed'));
  return {
    async close() {
      await worker.close();
      await queue.close();
    },
  };
}

export async function startLifecycleScheduler(o: LifecycleSchedulerOptions): Promise<LifecycleScheduler> {
  return startRepeatingJob({
    queue: LIFECYCLE_QUEUE,
    schedulerId: SCHEDULER_ID,
    jobName: 'lifecycle-pass',
    redisUrl: o.redisUrl,
    prefix: o.prefix,
    everyMs: o.everyMs ?? 5 * 60_000,
    log: o.log,
    run: async () => {
      const r = await runLifecyclePass(o.db, o.scope);
      if (r.expired.length || r.deleted.length) o.log?.info({ expired: r.expired, deleted: r.deleted }, 'account lifecycle pass');
      o.onPass?.(r);
      return { expired: r.expired.length, deleted: r.deleted.length };
    },
  });
}
