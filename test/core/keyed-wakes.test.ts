import { expect } from 'chai';
import net from 'node:net';
import { Redis } from 'ioredis';
import { EventPublisher, type PlatformEvent } from '../../core/events/bus';
import { KeyedWakes } from '../../core/events/keyed-wakes';
import { newId } from '../../core/ids';
import { createLogger } from '../../core/logger';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:56379/1';

/** Resolves with the next wake, or rejects after `ms`. */
function nextWake(watch: (wake: () => void) => void, ms = 5000): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no wake in ${ms} ms`)), ms);
    watch(() => {
      clearTimeout(t);
      resolve();
    });
  });
}

/** A TCP proxy on loopback in front of the real Redis; while `refusing`, it closes every connection at once (Redis away). */
async function redisProxy(target: URL) {
  const open = new Set<net.Socket>();
  const state = { refusing: true };
  const server = net.createServer((client) => {
    client.on('error', () => undefined);
    if (state.refusing) return void client.destroy();
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  server.on('error', () => undefined);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    state,
    port: (server.address() as net.AddressInfo).port,
    async close(): Promise<void> {
      for (const s of open) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('core/events KeyedWakes (real Redis stream)', () => {
  const stream = `test-keyed-wakes-${newId()}`;
  const connectionName = `test-keyed-wakes-${process.pid}`;
  let redis: Redis;
  let pub: EventPublisher;
  const customer = newId();
  /** Keyed by the event's resource id; events of resource 'ping' wake nobody. */
  const keyOf = (e: PlatformEvent): string | null => (e.resource === 'ping' ? null : e.resource_id);
  const wakes = () => new KeyedWakes({ redis, logger: createLogger('silent'), connectionName, label: 'test', keyOf, blockMs: 200, stream });
  const readerConnected = async () => String(await redis.client('LIST')).includes(`name=${connectionName} `);

  before(() => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
    pub = new EventPublisher(redis, stream);
  });
  after(async () => {
    await redis.del(stream);
    redis.disconnect();
  });

  it('opens no reader before the first watch, then wakes only the watchers of the event key', async () => {
    const w = wakes();
    expect(w.stats()).to.deep.equal({ waiters: 0, keys: 0, reading: false, listeners: 0 });
    expect(await readerConnected()).to.equal(false);
    let bWoken = 0;
    let a1: { ready: Promise<void>; release(): void } | undefined;
    const a1Woken = nextWake((wake) => (a1 = w.watch('a', wake)));
    const a2 = w.watch('a', () => undefined);
    const b = w.watch('b', () => bWoken++);
    expect(w.stats()).to.deep.equal({ waiters: 3, keys: 2, reading: true, listeners: 1 });
    await Promise.all([a1!.ready, a2.ready, b.ready]);
    expect(await readerConnected()).to.equal(true);
    await pub.publish('ping', customer, 'b', {}); // keyOf null: nobody
    await pub.publish('call_hangup', customer, 'a', {});
    await a1Woken;
    const bAfterA = bWoken;
    let b2: { release(): void } | undefined;
    await Promise.all([nextWake((wake) => (b2 = w.watch('b', wake))), pub.publish('call_hangup', customer, 'b', {})]);
    expect(bAfterA).to.equal(0);
    expect(bWoken).to.equal(1);
    for (const x of [a1!, a2, b, b2!]) x.release();
    expect(w.reading).to.equal(false);
  });

  it('closes the reader and its connection with the last release (idempotent), and opens it again on the next watch', async () => {
    const w = wakes();
    const a = w.watch('a', () => undefined);
    const b = w.watch('b', () => undefined);
    await Promise.all([a.ready, b.ready]);
    a.release();
    a.release(); // the second release of a watch counts for nothing
    expect(w.stats()).to.deep.equal({ waiters: 1, keys: 1, reading: true, listeners: 1 });
    b.release();
    expect(w.stats()).to.deep.equal({ waiters: 0, keys: 0, reading: false, listeners: 0 });
    for (let i = 0; (await readerConnected()) && i < 50; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await readerConnected()).to.equal(false);

    const c = w.watch('c', () => undefined);
    await c.ready;
    expect(await readerConnected()).to.equal(true);
    c.release();
    expect(w.reading).to.equal(false);
  });

  it('a reader whose start fails (Redis away) with a watch still held is let go of: the next watch, Redis back, gets a reader that works', async () => {
    const url = new URL(REDIS_URL);
    const proxy = await redisProxy(url);
    // the connection the wakes duplicate for their reader goes through the proxy; a command fails after one reconnection
    const via = new Redis({ host: '127.0.0.1', port: proxy.port, db: Number(url.pathname.slice(1) || 0), lazyConnect: true, maxRetriesPerRequest: 1 });
    via.on('error', () => undefined);
    const w = new KeyedWakes({ redis: via, logger: createLogger('silent'), connectionName: `${connectionName}-away`, label: 'test', keyOf, blockMs: 200, stream });
    try {
      const first = w.watch('a', () => undefined);
      const failed = await first.ready.then(
        () => null,
        (e: unknown) => e,
      );
      expect(failed, "the first reader's start failed").to.be.an.instanceOf(Error);
      proxy.state.refusing = false;
      // the first watch is still held: the next one must not get its failed reader
      let second: { ready: Promise<void>; release(): void } | undefined;
      const woken = nextWake((wake) => (second = w.watch('b', wake)));
      await second!.ready;
      expect(w.stats()).to.deep.equal({ waiters: 2, keys: 2, reading: true, listeners: 1 });
      await pub.publish('call_hangup', customer, 'b', {});
      await woken;
      first.release();
      second!.release();
      expect(w.reading).to.equal(false);
    } finally {
      via.disconnect();
      await proxy.close();
    }
  });
});
