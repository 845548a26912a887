import { expect } from 'chai';
import { Redis } from 'ioredis';
import { EventPublisher, EventSubscriber, resourceOf, type PlatformEvent } from '../../core/events/bus';
import { newId } from '../../core/ids';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:56379/1';

function collect(sub: EventSubscriber, n: number, timeoutMs = 5000): Promise<PlatformEvent[]> {
  return new Promise((resolve, reject) => {
    const got: PlatformEvent[] = [];
    const t = setTimeout(() => reject(new Error(`only ${got.length} of ${n} events`)), timeoutMs);
    sub.on('event', (e: PlatformEvent) => {
      got.push(e);
      if (got.length === n) {
        clearTimeout(t);
        resolve(got);
      }
    });
  });
}

describe('core/events bus (real Redis stream)', () => {
  const stream = `test-events-${newId()}`;
  const conns: Redis[] = [];
  const conn = () => {
    const r = new Redis(REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 2 });
    conns.push(r);
    return r;
  };
  after(async () => {
    await conns[0]?.del(stream);
    for (const c of conns) c.disconnect();
  });

  it('derives the topic resource from the event type', () => {
    expect(resourceOf('call_hangup')).to.equal('call');
    expect(resourceOf('transcript_created')).to.equal('transcript');
    expect(resourceOf('ping')).to.equal('ping');
  });

  it('fans every event out to every plain subscriber, in order', async () => {
    const a = new EventSubscriber(conn(), { stream, blockMs: 200 });
    const b = new EventSubscriber(conn(), { stream, blockMs: 200 });
    await a.start();
    await b.start();
    await new Promise((r) => setTimeout(r, 100)); // both are blocked on XREAD from '$'
    const pa = collect(a, 3);
    const pb = collect(b, 3);
    const pub = new EventPublisher(conn(), stream);
    const cid = newId();
    for (const t of ['call_created', 'call_ringing', 'call_hangup']) await pub.publish(t, cid, 'r1', { status: t });
    const [ga, gb] = await Promise.all([pa, pb]);
    await Promise.all([a.stop(), b.stop()]);
    expect(ga.map((e) => e.event_type)).to.deep.equal(['call_created', 'call_ringing', 'call_hangup']);
    expect(gb.map((e) => e.id)).to.deep.equal(ga.map((e) => e.id));
    expect(ga[0]).to.include({ customer_id: cid, resource: 'call', resource_id: 'r1' });
    expect(Date.parse(ga[0]!.timestamp)).to.be.greaterThan(0);
  });

  it('delivers each event to exactly one consumer of a group', async () => {
    const group = `g-${newId()}`;
    const c1 = new EventSubscriber(conn(), { stream, group, consumer: 'c1', blockMs: 200 });
    const c2 = new EventSubscriber(conn(), { stream, group, consumer: 'c2', blockMs: 200 });
    await c1.start();
    await c2.start();
    const ids: string[] = [];
    c1.on('event', (e: PlatformEvent) => ids.push(e.id));
    c2.on('event', (e: PlatformEvent) => ids.push(e.id));
    const pub = new EventPublisher(conn(), stream);
    const sent: string[] = [];
    for (let i = 0; i < 20; i++) sent.push((await pub.publish('number_updated', newId(), `n${i}`, { i })).id);
    const deadline = Date.now() + 5000;
    while (ids.length < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await Promise.all([c1.stop(), c2.stop()]);
    expect(ids.slice().sort()).to.deep.equal(sent.slice().sort());
    expect(new Set(ids).size).to.equal(20);
  });

  it('a plain subscriber gets every event published right after start() resolves', async () => {
    const pub = new EventPublisher(conn(), stream);
    await pub.publish('call_created', newId(), 'old', {}); // before start: not delivered
    const sub = new EventSubscriber(conn(), { stream, blockMs: 200 });
    await sub.start();
    const got = collect(sub, 2);
    await pub.publish('call_ringing', newId(), 'new1', {}); // no pause: the start position is fixed
    await pub.publish('call_hangup', newId(), 'new2', {});
    const events = await got;
    await sub.stop();
    expect(events.map((e) => e.resource_id)).to.deep.equal(['new1', 'new2']);
  });

  it('a batch whose handler fails stays pending and is handled again, not lost', async () => {
    const group = `g-${newId()}`;
    let failures = 1;
    const handled: string[] = [];
    const sub = new EventSubscriber(conn(), {
      stream,
      group,
      consumer: 'c1',
      blockMs: 200,
      handler: async (events) => {
        if (failures-- > 0) throw new Error('database down');
        handled.push(...events.map((e) => e.resource_id));
      },
    });
    const errors: unknown[] = [];
    sub.on('error', (e) => errors.push(e));
    await sub.start();
    const pub = new EventPublisher(conn(), stream);
    await pub.publish('number_created', newId(), 'x1', {});
    const deadline = Date.now() + 5000;
    while (handled.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await sub.stop();
    expect(errors).to.have.length(1);
    expect(handled).to.deep.equal(['x1']);
  });
});
