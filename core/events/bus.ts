/**
 * State changes published once through a Redis stream. Every control-api copy reads the stream from
 * its own position (WebSocket fan-out needs every event on every copy); webhook delivery reads it
 * through a consumer group, so each event is delivered by exactly one copy. A publisher writes the
 * record to Postgres first, then publishes; the event id lets readers drop a redelivered duplicate.
 */
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { newId } from '../ids';
import { clock } from '../clock';

export interface PlatformEvent {
  id: string;
  event_type: string;
  customer_id: string;
  /** The resource part of the topic: the event type up to its first underscore (call_hangup → call). */
  resource: string;
  resource_id: string;
  /** RFC 3339. */
  timestamp: string;
  data: Record<string, unknown>;
}

export const EVENT_STREAM = 'events';
/** Stream length kept (approximate trim): enough for a reader that was down a few minutes. */
const MAX_LEN = 200_000;

export function resourceOf(eventType: string): string {
  const i = eventType.indexOf('_');
  return i < 0 ? eventType : eventType.slice(0, i);
}

export class EventPublisher {
  constructor(private readonly redis: Redis, private readonly stream = EVENT_STREAM) {}

  async publish(eventType: string, customerId: string, resourceId: string, data: Record<string, unknown>): Promise<PlatformEvent> {
    const event: PlatformEvent = {
      id: newId(),
      event_type: eventType,
      customer_id: customerId,
      resource: resourceOf(eventType),
      resource_id: resourceId,
      timestamp: clock.now().toISOString(),
      data,
    };
    await this.redis.xadd(this.stream, 'MAXLEN', '~', String(MAX_LEN), '*', 'e', JSON.stringify(event));
    return event;
  }
}

function decode(fields: string[]): PlatformEvent | null {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === 'e') {
      try {
        return JSON.parse(fields[i + 1]!) as PlatformEvent;
      } catch {
        return null;
      }
    }
  }
  return null;
}

type StreamReply = [string, [string, string[]][]][] | null;

/**
 * Reads the stream on a dedicated connection (XREAD BLOCK holds it) and emits 'event' for each new
 * event. With `group`, reads through that consumer group and acknowledges after the handlers ran.
 */
export class EventSubscriber extends EventEmitter {
  private running = false;
  private lastId = '$';
  private readonly seen = new Set<string>();
  private readonly seenOrder: string[] = [];

  constructor(
    private readonly redis: Redis,
    private readonly opts: { stream?: string; group?: string; consumer?: string; blockMs?: number } = {},
  ) {
    super();
  }

  async start(): Promise<void> {
    const stream = this.opts.stream ?? EVENT_STREAM;
    if (this.opts.group) {
      try {
        await this.redis.xgroup('CREATE', stream, this.opts.group, '$', 'MKSTREAM');
      } catch (err) {
        if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
      }
    } else {
      // Resolve '$' once: reading '$' on every loop would miss events published between two reads.
      const last = (await this.redis.xrevrange(stream, '+', '-', 'COUNT', '1')) as [string, string[]][];
      this.lastId = last.length > 0 ? last[0][0] : '0-0';
    }
    this.running = true;
    void this.loop(stream);
  }

  /** Runs every 'event' listener; promises they return are awaited (so a group XACKs only after them). */
  private async deliver(event: unknown): Promise<void> {
    const results = this.listeners('event').map((l) => {
      try {
        return Promise.resolve((l as (e: unknown) => unknown)(event));
      } catch (err) {
        return Promise.reject(err);
      }
    });
    for (const r of await Promise.allSettled(results)) {
      if (r.status === 'rejected' && this.listenerCount('error') > 0) this.emit('error', r.reason);
    }
  }

  private remember(id: string): boolean {
    if (this.seen.has(id)) return false;
    this.seen.add(id);
    this.seenOrder.push(id);
    if (this.seenOrder.length > 10_000) this.seen.delete(this.seenOrder.shift()!);
    return true;
  }

  private async loop(stream: string): Promise<void> {
    const block = String(this.opts.blockMs ?? 1000);
    while (this.running) {
      try {
        const reply = (this.opts.group
          ? await this.redis.xreadgroup('GROUP', this.opts.group, this.opts.consumer ?? newId(), 'COUNT', '500', 'BLOCK', block, 'STREAMS', stream, '>')
          : await this.redis.xread('COUNT', '500', 'BLOCK', block, 'STREAMS', stream, this.lastId)) as StreamReply;
        if (!reply) continue;
        for (const [, entries] of reply) {
          for (const [entryId, fields] of entries) {
            this.lastId = entryId;
            const event = decode(fields);
            if (event && this.remember(event.id)) await this.deliver(event);
            if (this.opts.group) await this.redis.xack(stream, this.opts.group, entryId);
          }
        }
      } catch (err) {
        if (!this.running) return;
        this.emit('error', err);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** Stops after the current blocking read returns (at most blockMs). */
  stop(): void {
    this.running = false;
  }
}
