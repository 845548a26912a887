/** Shared pieces of the campaign suites: the stack of the real-call suites, an authenticated supertest client and the error-envelope check. */
import request from 'supertest';
import { expect } from 'chai';
import { buildTestApp, type Fixture, type TestApp } from '../../testkit/api';
import { killAllSipp, startPlatform, type Platform } from '../../testkit/media-app/harness';
import { CampaignRunner } from '../../control-api/campaigns/runner';
import { closeCommandBus } from '../../control-api/calls/bus';
import type { Redis } from 'ioredis';
import { eventStreamOf } from '../../testkit/event-stream';

export interface CampaignStack {
  p: Platform;
  /** the control-api copies, each running a campaign runner */
  apps: TestApp[];
}

/**
 * Mocha hooks of the campaign suites on real calls: a platform (`env`) and `copies` control-api copies on
 * its Redis key prefix (`env`, no rate limit, and `appEnv(p)`), each running the campaign runner (ticks of
 * 100 ms, 130 ms, ...: two runners step the same campaigns); `ready` receives them once up. After the
 * suite: every sipp killed, the runners stopped, the copies (their command bus) and the platform closed.
 */
export function useCampaignStack(copies: number, env: Record<string, string>, ready: (s: CampaignStack) => void, appEnv: (p: Platform) => Record<string, string> = () => ({})): void {
  let p: Platform | undefined;
  const apps: TestApp[] = [];
  const runners: CampaignRunner[] = [];
  before(async () => {
    p = await startPlatform(env);
    for (let i = 0; i < copies; i++) apps.push(await buildTestApp({ env: { ...env, REDIS_KEY_PREFIX: p.config.redisKeyPrefix, RATE_LIMIT_SCALE: '0', ...appEnv(p) } }));
    runners.push(...apps.map((t, i) => new CampaignRunner(t.ctx, { tickMs: 100 + 30 * i })));
    for (const r of runners) r.start();
    ready({ p, apps });
  });
  after(async () => {
    killAllSipp();
    for (const r of runners.splice(0)) await r.stop();
    for (const t of apps.splice(0)) {
      await closeCommandBus(t.ctx);
      await t.close();
    }
    await p?.close();
  });
}

export function api(t: TestApp, f: Fixture) {
  const q = { accesskey: f.accesskey };
  return {
    get: (p: string, query: Record<string, string> = {}) =>
      request(t.app)
        .get(`/v1.0${p}`)
        .query({ ...q, ...query }),
    post: (p: string, body: object = {}) => request(t.app).post(`/v1.0${p}`).query(q).send(body),
    put: (p: string, body: object) => request(t.app).put(`/v1.0${p}`).query(q).send(body),
    del: (p: string) => request(t.app).delete(`/v1.0${p}`).query(q),
  };
}

/** The spec's error envelope with this HTTP status and reason. */
export function expectError(res: request.Response, http: number, reason: string): Record<string, unknown> {
  expect(res.status, JSON.stringify(res.body)).to.equal(http);
  expect(res.body.error).to.be.an('object');
  expect(res.body.error.reason).to.equal(reason);
  expect(res.body.error.status).to.be.a('string');
  expect(res.body.error.message).to.be.a('string');
  expect(res.body.error.request_id).to.be.a('string').and.not.equal('');
  return res.body.error;
}

/**
 * Every event published since `sinceMs`, grouped by resource id, in order: one read of the stream
 * `redis` is tied to (testkit/event-stream) (eventsFor reads all of it per resource, too slow for dozens of resources).
 */
export async function eventsSince(redis: Redis, sinceMs: number): Promise<Map<string, { event_type: string; data: Record<string, unknown> }[]>> {
  const entries = (await redis.xrange(eventStreamOf(redis), `${sinceMs}-0`, '+')) as [string, string[]][];
  const out = new Map<string, { event_type: string; data: Record<string, unknown> }[]>();
  for (const [, fields] of entries) {
    const i = fields.indexOf('e');
    if (i < 0) continue;
    const e = JSON.parse(fields[i + 1]!);
    const list = out.get(e.resource_id) ?? [];
    list.push(e);
    out.set(e.resource_id, list);
  }
  return out;
}

/** The events of one resource published in the last `windowMs` (default 10 minutes). */
export async function recentEventsFor(redis: Redis, resourceId: string, windowMs = 600_000): Promise<{ event_type: string; data: Record<string, unknown> }[]> {
  return (await eventsSince(redis, Date.now() - windowMs)).get(resourceId) ?? [];
}

/** Waits until the resource has at least `n` recent events (they go out right after the commit), then returns them. */
export async function awaitEvents(redis: Redis, resourceId: string, n: number, timeoutMs = 5000): Promise<{ event_type: string; data: Record<string, unknown> }[]> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const evs = await recentEventsFor(redis, resourceId);
    if (evs.length >= n || Date.now() > end) return evs;
    await new Promise((r) => setTimeout(r, 50));
  }
}
