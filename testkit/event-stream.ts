/**
 * What tests read of a deployment's event stream (eventStreamKey(REDIS_KEY_PREFIX), core/events/bus.ts)
 * through a Redis client of theirs. Each client is tied to one stream: startPlatform ties its `redis` from
 * the stream's end when it starts (the events of resources created before are not its tests'),
 * buildTestApp its `ctx.redis` from the start, a scale cluster its client; `eventsFor` on a client tied
 * to none is an error rather than a read of another deployment's stream.
 *
 *   await tieEventStream(redis, eventStreamKey(prefix), 'end');
 *   const events = await eventsFor(redis, callId);
 */
import type { Redis } from 'ioredis';

interface StreamEvent {
  event_type: string;
  data: Record<string, unknown>;
  resource_id: string;
}

/** Per Redis client: the stream it reads, the last entry read, and what was read, by resource. */
const cursors = new WeakMap<Redis, { stream: string; last: string; byResource: Map<string, StreamEvent[]> }>();
const EVENT_PAGE = 2000;

/** Ties `redis` to `stream`, read from its start or from its current end. */
export async function tieEventStream(redis: Redis, stream: string, from: 'start' | 'end'): Promise<void> {
  const lastEntry = from === 'end' ? ((await redis.xrevrange(stream, '+', '-', 'COUNT', 1)) as [string, string[]][]) : [];
  cursors.set(redis, { stream, last: lastEntry[0]?.[0] ?? '0-0', byResource: new Map() });
}

function cursorOf(redis: Redis) {
  const cursor = cursors.get(redis);
  if (!cursor) throw new Error("this Redis client is tied to no event stream (a platform's `redis`, a test app's `ctx.redis`, or tieEventStream)");
  return cursor;
}

/** The key of the event stream `redis` is tied to. */
export function eventStreamOf(redis: Redis): string {
  return cursorOf(redis).stream;
}

/**
 * The events of one resource on the stream `redis` is tied to, oldest first. Reads only what was added
 * since the last call on this client (in pages): a poll does not re-read and re-parse the whole stream,
 * which took ~1 s per 100,000 entries and blocked the test process, media-app included.
 */
export async function eventsFor(redis: Redis, resourceId: string): Promise<{ event_type: string; data: Record<string, unknown> }[]> {
  const cursor = cursorOf(redis);
  for (;;) {
    const entries = (await redis.xrange(cursor.stream, `(${cursor.last}`, '+', 'COUNT', EVENT_PAGE)) as [string, string[]][];
    for (const [id, fields] of entries) {
      cursor.last = id;
      const i = fields.indexOf('e');
      if (i < 0) continue;
      const e = JSON.parse(fields[i + 1]!) as StreamEvent;
      const list = cursor.byResource.get(e.resource_id);
      if (list) list.push(e);
      else cursor.byResource.set(e.resource_id, [e]);
    }
    if (entries.length < EVENT_PAGE) break;
  }
  return [...(cursor.byResource.get(resourceId) ?? [])];
}
