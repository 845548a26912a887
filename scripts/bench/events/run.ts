/**
 * Events benchmark (in one process, real Redis stream, real Postgres, loopback sockets):
 *  1. WebSocket fan-out: SUBS clients subscribed to `customer_id:<cid>:call:*`; a burst of events
 *     published through EventPublisher (events/s, frames/s), then a paced phase (end-to-end p50/p99
 *     from publish to client receipt). Baseline in the same run: a bare `ws` server broadcasting the
 *     same frames to the same number of clients (no Redis, no topic matching).
 *  2. Webhooks: deliveries/s through the full path (stream → consumer group → delivery rows →
 *     BullMQ drain per customer → signed HTTP POST) to a loopback receiver; baseline: the same
 *     number of signed POSTs sent directly with the same concurrency.
 *
 *   set -a; source .data/env; set +a; npx tsx scripts/bench/events/run.ts [--subs 1000] [--burst 300] [--webhooks 2000]
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { WebSocket, WebSocketServer } from 'ws';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../../testkit/api';
import { freePort } from '../../../testkit/ports';
import { testDb } from '../../../testkit/db';
import { attachWebSocket } from '../../../control-api/ws';
import { startWebhooks } from '../../../control-api/webhooks';
import { attempt } from '../../../control-api/webhooks/send';
import { EventPublisher } from '../../../core/events/bus';
import { newId } from '../../../core/ids';

const arg = (n: string, d: number) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};
const SUBS = arg('subs', 1000);
const BURST = arg('burst', 300);
const PACED_RATE = arg('rate', 10);
const PACED_SEC = arg('seconds', 3);
const WEBHOOKS = arg('webhooks', 2000);
const CUSTOMERS = arg('customers', 20);

const now = () => performance.timeOrigin + performance.now();
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Sub {
  got: number;
  lat: number[];
}

async function openClients(url: string, n: number, subscribe: unknown | null): Promise<{ subs: Sub[]; sockets: WebSocket[] }> {
  const subs: Sub[] = [];
  const sockets: WebSocket[] = [];
  for (let i = 0; i < n; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, async () => {
        const s: Sub = { got: 0, lat: [] };
        const ws = new WebSocket(url);
        ws.on('message', (d) => {
          const m = JSON.parse(d.toString()) as { data: { sent_at: number } };
          s.got++;
          s.lat.push(now() - m.data.sent_at);
        });
        await new Promise<void>((res, rej) => ws.once('open', () => res()).once('error', rej));
        if (subscribe) ws.send(JSON.stringify(subscribe));
        subs.push(s);
        sockets.push(ws);
      }),
    );
  }
  return { subs, sockets };
}

async function waitAll(subs: Sub[], each: number, timeoutMs = 120_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (subs.some((s) => s.got < each)) {
    if (Date.now() > end) throw new Error(`timeout: ${subs.filter((s) => s.got >= each).length}/${subs.length} complete`);
    await sleep(5);
  }
}

async function fanout(label: string, subs: Sub[], publish: (i: number) => Promise<void>) {
  for (const s of subs) {
    s.got = 0;
    s.lat = [];
  }
  const t0 = now();
  for (let i = 0; i < BURST; i++) await publish(i);
  await waitAll(subs, BURST);
  const burstSec = (now() - t0) / 1000;
  for (const s of subs) {
    s.got = 0;
    s.lat = [];
  }
  const n = PACED_RATE * PACED_SEC;
  const start = now();
  for (let i = 0; i < n; i++) {
    const due = start + (i * 1000) / PACED_RATE;
    const wait = due - now();
    if (wait > 0) await sleep(wait);
    await publish(i);
  }
  const achieved = n / ((now() - start) / 1000);
  await waitAll(subs, n);
  const lat = subs.flatMap((s) => s.lat);
  const r = { label, events_per_s: BURST / burstSec, frames_per_s: (BURST * subs.length) / burstSec, p50_ms: pct(lat, 50), p99_ms: pct(lat, 99) };
  console.log(
    `${label.padEnd(28)} burst ${r.events_per_s.toFixed(0)} events/s (${r.frames_per_s.toFixed(0)} frames/s); paced ${achieved.toFixed(1)}/s achieved: p50 ${r.p50_ms.toFixed(1)} ms, p99 ${r.p99_ms.toFixed(1)} ms`,
  );
  return r;
}

/** WebSocket fan-out: a bare ws broadcast of the same frames (the baseline), then the platform's stream → /v1.0/ws. */
async function wsFanout(f: Fixture, port: number, ws: Awaited<ReturnType<typeof attachWebSocket>>, pub: EventPublisher, rid: string): Promise<void> {
  // Baseline: bare ws broadcast of the same frames.
  const basePort = await freePort();
  const bare = new WebSocketServer({ host: '127.0.0.1', port: basePort });
  const baseClients = await openClients(`ws://127.0.0.1:${basePort}`, SUBS, null);
  const base = await fanout('baseline (bare ws broadcast)', baseClients.subs, async () => {
    const frame = JSON.stringify({
      event_type: 'call_updated',
      timestamp: new Date().toISOString(),
      topic: `customer_id:${f.customer.id}:call:${rid}`,
      data: { id: rid, customer_id: f.customer.id, sent_at: now(), status: 'progressing' },
    });
    for (const c of bare.clients) c.send(frame);
  });
  for (const s of baseClients.sockets) s.terminate();
  bare.close();

  const ours = await openClients(`ws://127.0.0.1:${port}/v1.0/ws?accesskey=${f.accesskey}`, SUBS, { type: 'subscribe', topics: [`customer_id:${f.customer.id}:call:*`] });
  await sleep(300);
  const res = await fanout('platform (stream → /v1.0/ws)', ours.subs, async () => {
    await pub.publish('call_updated', f.customer.id, rid, { id: rid, customer_id: f.customer.id, sent_at: now(), status: 'progressing' });
  });
  console.log(`ratio platform/baseline: events/s ${(res.events_per_s / base.events_per_s).toFixed(2)}, p99 ${(res.p99_ms / base.p99_ms).toFixed(2)}x; dropped ${ws.hub.stats.dropped}`);
  for (const s of ours.sockets) s.terminate();
  await ws.close();
}

/** Webhooks: direct signed POSTs (32 parallel, the baseline), then the platform's stream → BullMQ → POST over CUSTOMERS customers. */
async function webhookDelivery(t: TestApp, stream: string, pub: EventPublisher, rid: string): Promise<{ close(): Promise<void> }> {
  let received = 0;
  const recv = http.createServer((req, r) => {
    req.resume();
    req.on('end', () => {
      received++;
      r.end('ok');
    });
  });
  const rport = await freePort();
  await new Promise<void>((r) => recv.listen(rport, '127.0.0.1', () => r()));
  const uri = `http://127.0.0.1:${rport}/hook`;
  const customers = [];
  for (let i = 0; i < CUSTOMERS; i++) {
    const c = await createFixture(t.ctx);
    await t.ctx.db('customers').where({ id: c.customer.id }).update({ webhook_uri: uri, webhook_method: 'POST' });
    customers.push(c.customer.id);
  }
  const body = JSON.stringify({ event_type: 'call_updated', timestamp: new Date().toISOString(), topic: 'x', data: { id: rid } });
  let t0 = now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(32, CUSTOMERS) }, async () => {
      while (next < WEBHOOKS) {
        next++;
        await attempt({ uri, method: 'POST', secret: 'bench-secret-0123456789', body, egress: t.ctx.egress });
      }
    }),
  );
  const baseRate = WEBHOOKS / ((now() - t0) / 1000);
  received = 0;
  const hooks = await startWebhooks(t.ctx, { stream, queue: `bench-${newId()}`, group: `bench-${newId()}` });
  t0 = now();
  for (let i = 0; i < WEBHOOKS; i++) {
    const cid = customers[i % customers.length]!;
    await pub.publish('call_updated', cid, rid, { id: rid, customer_id: cid, seq: i });
  }
  const end = Date.now() + 180_000;
  while (received < WEBHOOKS && Date.now() < end) await sleep(20);
  const rate = received / ((now() - t0) / 1000);
  console.log(
    `webhooks: baseline direct signed POSTs (32 parallel) ${baseRate.toFixed(0)}/s; platform (stream → BullMQ → POST, ${CUSTOMERS} customers) ${rate.toFixed(0)}/s; ratio ${(rate / baseRate).toFixed(2)}; delivered ${received}/${WEBHOOKS}`,
  );
  return {
    close: async () => {
      await hooks.close();
      recv.close();
    },
  };
}

async function main(): Promise<void> {
  const t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', LOG_LEVEL: 'warn', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' } }); // loopback receiver
  const f = await createFixture(t.ctx);
  const stream = `bench-events-${newId()}`;
  const server = http.createServer(t.app);
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const ws = await attachWebSocket(server, t.ctx, { stream, maxBufferedBytes: 8 * 1024 * 1024 });
  const pub = new EventPublisher(t.ctx.redis, stream);
  const rid = newId();
  console.log(`WebSocket fan-out to ${SUBS} subscribers, burst ${BURST} events, paced ${PACED_RATE}/s x ${PACED_SEC}s`);

  await wsFanout(f, port, ws, pub, rid);
  const webhooks = await webhookDelivery(t, stream, pub, rid);

  await webhooks.close();
  await t.ctx.redis.del(stream);
  server.close();
  await t.close();
  await (await testDb()).destroy();
  process.exit(0);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
