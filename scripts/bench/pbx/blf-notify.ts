/**
 * Busy lamp NOTIFY latency with many subscriptions: sip-server and a media-app node (startPlatform,
 * in this process) on loopback; SUBS dialog subscriptions (digest-authenticated, raw UDP subscribers
 * of testkit/pbx/subscriber.ts on a few sockets) spread over RESOURCES extensions; then ROUNDS rounds
 * in which every resource's state changes once (early, confirmed, terminated in turn), the changes
 * spread evenly over one second and written by another "node" (its own Redis connection writing the
 * shared store, as a call on another node does). Latency: the change written → each of its
 * subscribers' NOTIFY received. Baseline in the same run: the bare Redis pub/sub round trip of the
 * same number of changes (what any cross-node notice costs before SIP).
 *
 *   source .data/env && npx tsx scripts/bench/pbx/blf-notify.ts [--subs 1000] [--resources 100] [--rounds 6]
 */
process.env.LOG_LEVEL ??= 'silent';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { PresenceStore, type DialogPhase } from '../../../core/presence/store';
import { createExtension, startPlatform } from '../../../testkit/media-app/harness';
import { Subscriber } from '../../../testkit/pbx/subscriber';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const SUBS = arg('subs', 1000);
const RESOURCES = arg('resources', 100);
const ROUNDS = arg('rounds', 6);
const SOCKETS = 4;
if (!(SUBS > 0 && SUBS <= 5000 && RESOURCES > 0 && RESOURCES <= SUBS && ROUNDS > 0 && ROUNDS <= 60)) {
  console.error('usage: blf-notify.ts [--subs 1..5000] [--resources 1..subs] [--rounds 1..60]');
  process.exit(2);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const now = () => performance.timeOrigin + performance.now();
const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (${xs.length})`;

async function baseline(redisUrl: string, n: number): Promise<number[]> {
  const pub = new Redis(redisUrl);
  const sub = new Redis(redisUrl);
  const channel = `bench-blf-baseline-${process.pid}`;
  const sent = new Map<string, number>();
  const lat: number[] = [];
  sub.on('message', (_c, m) => {
    const t = sent.get(m);
    if (t !== undefined) lat.push(now() - t);
  });
  await sub.subscribe(channel);
  for (let i = 0; i < n; i++) {
    const m = `m${i}`;
    sent.set(m, now());
    await pub.publish(channel, m);
    await sleep(1000 / RESOURCES);
  }
  await sleep(300);
  pub.disconnect();
  sub.disconnect();
  return lat;
}

async function main(): Promise<void> {
  const redisUrl = process.env.TEST_REDIS_URL;
  if (!redisUrl) throw new Error('TEST_REDIS_URL is not set: source .data/env');
  const p = await startPlatform({ SUBSCRIBE_MAX_EXPIRES: '3600' });
  const other = new Redis(redisUrl);
  const subscribers: Subscriber[] = [];
  try {
    const watcher = await createExtension();
    const resources: Awaited<ReturnType<typeof createExtension>>[] = [];
    for (let i = 0; i < RESOURCES; i++) resources.push(await createExtension(watcher.customerId));
    for (let i = 0; i < SOCKETS; i++) subscribers.push(await Subscriber.open(p.sipPort));

    // latency per (resource, state) change: each NOTIFY carrying the state counts once per subscription
    const pending = new Map<string, number>();
    const lat: number[] = [];
    let stray = 0;
    for (const s of subscribers) {
      s.keep = false;
      s.onNotify = (m) => {
        const entity = /entity="sip:([^@"]+)@/.exec(m.body)?.[1];
        const state = /<state>([a-z]+)<\/state>/.exec(m.body)?.[1];
        const t = entity && state ? pending.get(`${entity}|${state}`) : undefined;
        if (t === undefined) stray++;
        else lat.push(now() - t);
      };
    }

    const t0 = now();
    let refused = 0;
    for (let i = 0; i < SUBS; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, SUBS - i) }, async (_, j) => {
          const r = resources[(i + j) % RESOURCES]!;
          const s = await subscribers[(i + j) % SOCKETS]!.subscribe({
            user: watcher.ext.username,
            domain: watcher.domain,
            password: watcher.password,
            resource: r.ext.extension,
            event: 'dialog',
            expires: 3600,
          });
          if (s.response.status >= 300) refused++;
        }),
      );
    }
    const setup = (now() - t0) / 1000;
    await sleep(1000); // the initial NOTIFYs
    stray = 0;
    const held = p.app.factory.services.presence!.subscriptionCount;
    console.log(`subscriptions: ${held} held, ${refused} refused, set up in ${setup.toFixed(1)} s`);

    const store = new PresenceStore(other, p.config.redisKeyPrefix);
    const phases: DialogPhase[] = ['early', 'confirmed', 'terminated'];
    for (let round = 0; round < ROUNDS; round++) {
      const state = phases[round % phases.length]!;
      for (const r of resources) {
        pending.set(`${r.ext.extension}|${state}`, now());
        const entry = { id: `bench-${r.ext.extension}`, state, direction: 'recipient' as const, remote: { uri: `sip:${watcher.ext.extension}@${watcher.domain}` } };
        if (state === 'terminated') await store.endDialog(watcher.customerId, r.ext.extension, entry);
        else await store.setDialog(watcher.customerId, r.ext.extension, entry);
        await sleep(1000 / RESOURCES);
      }
      await sleep(500);
      pending.clear();
    }
    await sleep(500);
    const expected = ROUNDS * SUBS;
    console.log(`NOTIFY latency, change written → NOTIFY received: ${fmt(lat)}; ${expected - lat.length} missing, ${stray} unmatched`);
    const base = await baseline(redisUrl, ROUNDS * RESOURCES);
    console.log(`baseline, Redis publish → message: ${fmt(base)}`);
    console.log(`ratio p99: ${(pct(lat, 99) / pct(base, 99)).toFixed(1)}; target p99 < 500 ms: ${pct(lat, 99) < 500 && lat.length === expected ? 'met' : 'NOT met'}`);
  } finally {
    for (const s of subscribers) s.close();
    other.disconnect();
    await p.close();
  }
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    console.error(err);
    process.exit(1);
  },
);
