// Two deployments sharing one Redis with different REDIS_KEY_PREFIX values (docs/deploy.md, "Redis, with
// Sentinel": every key is under the prefix) must not see each other's events: each control-api publishes
// onto, and its WebSocket reader reads, the event stream under its own prefix. Built as the platform
// builds them (buildTestApp from the environment, the route's publisher, attachWebSocket's default
// stream), against the real Redis.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../../testkit/api';
import { until } from '../../../testkit/media-app/harness';
import { attachWebSocket, type WebSocketService } from '../../../control-api/ws';
import { eventStreamKey } from '../../../core/events/bus';
import { connect, type Client } from './support';

interface Deployment {
  t: TestApp;
  server: http.Server;
  ws: WebSocketService;
  url(query: string): string;
  close(): Promise<void>;
}

async function deployment(): Promise<Deployment> {
  const t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
  const server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const ws = await attachWebSocket(server, t.ctx, { pingIntervalMs: 60_000 });
  const port = (server.address() as AddressInfo).port;
  return {
    t,
    server,
    ws,
    url: (q) => `ws://127.0.0.1:${port}/v1.0/ws?${q}`,
    async close() {
      await ws.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await t.close();
    },
  };
}

/** The stream keys in Redis under `prefix`. */
async function streamsUnder(d: Deployment, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = (await d.t.ctx.redis.call('SCAN', cursor, 'MATCH', `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`, 'TYPE', 'stream', 'COUNT', '1000')) as [string, string[]];
    cursor = next;
    out.push(...keys);
  } while (cursor !== '0');
  return out;
}

async function entryIn(d: Deployment, stream: string, eventId: string): Promise<boolean> {
  const entries = (await d.t.ctx.redis.xrange(stream, '-', '+')) as [string, string[]][];
  return entries.some(([, fields]) => fields[1] !== undefined && (JSON.parse(fields[1]) as { id: string }).id === eventId);
}

describe('the event stream under REDIS_KEY_PREFIX: two deployments on one Redis', function () {
  this.timeout(60_000);
  let a: Deployment;
  let b: Deployment;
  let f: Fixture;
  const clients: Client[] = [];

  before(async () => {
    a = await deployment();
    b = await deployment();
    expect(a.t.ctx.config.redisKeyPrefix).to.not.equal(b.t.ctx.config.redisKeyPrefix);
    // one database here, so the same customer exists in both: only the stream can keep them apart
    f = await createFixture(a.t.ctx);
    await a.t.ctx.db('customers').where({ id: f.customer.id }).update({ webhook_uri: 'http://127.0.0.1:9/hook', webhook_method: 'POST' });
  });
  after(async () => {
    for (const c of clients) c.socket.close();
    await a?.close();
    await b?.close();
  });

  async function subscribed(d: Deployment): Promise<Client> {
    const c = await connect(d.url(`accesskey=${f.accesskey}`));
    clients.push(c);
    c.send({ type: 'subscribe', topics: [`customer_id:${f.customer.id}`] });
    await until(() => d.ws.hub.all().some((s) => s.topics.size > 0), 5000, 'the subscription to reach the server');
    return c;
  }

  /** POST /customer/webhook_test on `d`: the event's id and topic (the topic names the payload, so frames tell events apart). */
  const webhookTest = async (d: Deployment): Promise<{ eventId: string; topic: string }> => {
    const r = await request(d.t.app).post('/v1.0/customer/webhook_test').query({ accesskey: f.accesskey });
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    const body = r.body as { event_id: string; topic: string };
    return { eventId: body.event_id, topic: body.topic };
  };

  it("an event published by deployment A reaches A's readers only, on a stream under A's prefix", async () => {
    const ca = await subscribed(a);
    const cb = await subscribed(b);
    const fromA = await webhookTest(a);
    await ca.waitFor(1);
    expect(ca.frames[0]!.topic).to.equal(fromA.topic);

    // B's own event, published after A's: were B reading A's stream, A's event would reach B first
    const fromB = await webhookTest(b);
    await cb.waitFor(1);
    expect(cb.frames[0]!.topic, "B's first frame is its own event").to.equal(fromB.topic);

    const prefixA = a.t.ctx.config.redisKeyPrefix;
    const prefixB = b.t.ctx.config.redisKeyPrefix;
    const holding = async (prefix: string, eventId: string): Promise<string[]> => {
      const out: string[] = [];
      for (const s of await streamsUnder(a, prefix)) if (await entryIn(a, s, eventId)) out.push(s);
      return out;
    };
    const streamA = await holding(prefixA, fromA.eventId);
    const streamB = await holding(prefixB, fromB.eventId);
    expect(streamA, `one stream under ${prefixA} holds A's event`).to.have.length(1);
    expect(streamB, `one stream under ${prefixB} holds B's event`).to.have.length(1);
    expect(await entryIn(a, streamB[0]!, fromA.eventId), "B's stream does not hold A's event").to.equal(false);
    expect(await entryIn(a, streamA[0]!, fromB.eventId), "A's stream does not hold B's event").to.equal(false);
    expect(streamA[0]).to.equal(eventStreamKey(prefixA));
    expect(streamB[0]).to.equal(eventStreamKey(prefixB));
  });

  it("derives the key from the prefix alone: '' keeps the key of before, `events`", () => {
    expect(eventStreamKey('')).to.equal('events');
    expect(eventStreamKey('pl:')).to.equal('pl:events');
    expect(eventStreamKey(a.t.ctx.config.redisKeyPrefix).startsWith(a.t.ctx.config.redisKeyPrefix)).to.equal(true);
  });
});
