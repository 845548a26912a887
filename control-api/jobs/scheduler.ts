// BullMQ repeatable job that runs the account lifecycle pass. One job scheduler per queue, so several
// control-api copies may all call startLifecycleScheduler: BullMQ keeps a single schedule and hands each
// run to one worker.
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

export async function startLifecycleScheduler(o: LifecycleSchedulerOptions): Promise<LifecycleScheduler> {
  const connection = bullConnection(o.redisUrl);
  const prefix = o.prefix ?? 'bull';
  const queue = new Queue(LIFECYCLE_QUEUE, { connection, prefix });
  await queue.upsertJobScheduler(
    SCHEDULER_ID,
    { every: o.everyMs ?? 5 * 60_000 },
    {
      name: 'lifecycle-pass',
      opts: { removeOnComplete: 100, removeOnFail: 100 },
    },
  );
  const worker = new Worker(
    LIFECYCLE_QUEUE,
    async () => {
      const r = await runLifecyclePass(o.db, o.scope);
      if (r.expired.length || r.deleted.length) o.log?.info({ expired: r.expired, deleted: r.deleted }, 'account lifecycle pass');
      o.onPass?.(r);
      return { expired: r.expired.length, deleted: r.deleted.length };
    },
    { connection, prefix, concurrency: 1 },
  );
  worker.on('failed', (_job, err) => o.log?.error({ err }, 'account lifecycle pass failed'));
  return {
    async close() {
      await worker.close();
      await queue.close();
    },
  };
}
