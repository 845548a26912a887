import { expect } from 'chai';
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
});
