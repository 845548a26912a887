/** Shared set-up of the flows and calls suites: one app, a fresh fixture per test. */
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../../testkit/api';
import { truncateAll } from '../../../testkit/db';
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { closeCommandBus, commandBus } from '../../../control-api/calls/bus';
import type { BusEnvelope } from '../../../core/commands/bus';

export { request };

export async function startApp(): Promise<TestApp> {
  return buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
}

export async function stopApp(t: TestApp): Promise<void> {
  await closeCommandBus(t.ctx);
  await t.close();
}

export async function freshFixture(t: TestApp): Promise<Fixture> {
  await truncateAll(t.ctx.db);
  return createFixture(t.ctx);
}

/** supertest helpers authenticated as the fixture's admin (accesskey). */
export function api(t: TestApp, f: Fixture) {
  const q = { accesskey: f.accesskey };
  return {
    get: (p: string) => request(t.app).get(`/v1.0${p}`).query(q),
    post: (p: string, body?: object) => (body === undefined ? request(t.app).post(`/v1.0${p}`).query(q) : request(t.app).post(`/v1.0${p}`).query(q).send(body)),
    put: (p: string, body: object) => request(t.app).put(`/v1.0${p}`).query(q).send(body),
    del: (p: string, body?: object) => (body === undefined ? request(t.app).delete(`/v1.0${p}`).query(q) : request(t.app).delete(`/v1.0${p}`).query(q).send(body)),
  };
}

/**
 * BullMQ workers on the command bus's real queues, standing in for media-app's consumer side only to
 * see what was enqueued where: `seen[queue]` in order, `clear` before each test, `waitFor` a count
 * (what arrived by then after `ms`), `close` at the end.
 */
export class BusQueues {
  readonly seen: Record<string, BusEnvelope[]> = {};
  private readonly workers: Worker[] = [];
  private constructor(private readonly conn: Redis) {}

  static async open(t: TestApp, queues: string[]): Promise<BusQueues> {
    const b = new BusQueues(new Redis(t.ctx.config.redisUrl, { maxRetriesPerRequest: null }));
    const prefix = commandBus(t.ctx).bullPrefix;
    for (const q of queues) {
      b.seen[q] = [];
      const w = new Worker(q, async (job: Job) => void b.seen[q]!.push(job.data as BusEnvelope), { connection: b.conn, prefix });
      b.workers.push(w);
      await w.waitUntilReady();
    }
    return b;
  }

  clear(): void {
    for (const k of Object.keys(this.seen)) this.seen[k] = [];
  }

  async waitFor(queue: string, n: number, ms = 5000): Promise<BusEnvelope[]> {
    const end = Date.now() + ms;
    while ((this.seen[queue]?.length ?? 0) < n && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    return this.seen[queue] ?? [];
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
    this.conn.disconnect();
  }
}
