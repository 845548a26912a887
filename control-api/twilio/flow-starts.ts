/**
 * The events a Calls redirect waiting for its call's flow wakes on (flow-wait.ts, issue 54): media-app
 * publishes `activeflow_created` (reference_type call, reference_id the call) once the flow's record is
 * written, and `call_*` when the call moves (terminating, hangup). One reader per control-api copy (an
 * EventSubscriber on a connection of its own, as the WebSocket fan-out's), open only while at least one
 * redirect waits: the first waiter opens it, the last one to leave closes it and its connection.
 * At most `max` wait at once; one more is refused (429, Twilio's 20429) rather than queued.
 *
 *   const w = flowStarts(ctx).watch(callId, () => wake());   // throws TwilioError 429 when full
 *   try { await w.ready; ...read the state, wait for wake()... } finally { w.release(); }
 */
import type { Redis } from 'ioredis';
import type { AppContext } from '../context';
import { EventSubscriber, type PlatformEvent } from '../../core/events/bus';
import { TwilioError } from './errors';

/** The reader's Redis connection name (CLIENT LIST shows it while it reads). */
export const flowStartsReaderName = (): string => `twilio-flow-wait-${process.pid}`;

export interface FlowWatch {
  /** Resolves once the reader reads: every event published from then on reaches `wake`. */
  ready: Promise<void>;
  /** Ends this watch (idempotent); the last one closes the reader. */
  release(): void;
}

export interface FlowStartsStats {
  /** Watches not released. */
  waiters: number;
  /** Calls with at least one watch. */
  calls: number;
  /** Whether the reader (and its connection) is open. */
  reading: boolean;
  /** 'event' listeners on the reader (1 while reading, else 0). */
  listeners: number;
}

interface Reader {
  redis: Redis;
  sub: EventSubscriber;
  ready: Promise<void>;
}

/** The call id an event is about, when it may end a wait: a call's move, or the start of a call's flow. */
function callOf(e: PlatformEvent): string | null {
  if (e.resource === 'call') return e.resource_id;
  if (e.event_type === 'activeflow_created' && e.data.reference_type === 'call' && typeof e.data.reference_id === 'string') return e.data.reference_id;
  return null;
}

export class FlowStarts {
  private readonly byCall = new Map<string, Set<() => void>>();
  private size = 0;
  private reader: Reader | null = null;

  constructor(
    private readonly ctx: AppContext,
    private readonly max: number,
  ) {}

  private readonly onEvent = (e: PlatformEvent): void => {
    const id = callOf(e);
    const wakes = id ? this.byCall.get(id) : undefined;
    if (wakes) for (const wake of [...wakes]) wake();
  };

  /** Watches `callId`'s events: `wake` runs on each (a hint to read the state again, never the state itself). */
  watch(callId: string, wake: () => void): FlowWatch {
    if (this.size >= this.max) {
      throw new TwilioError(429, 20429, `Too Many Requests: ${this.max} redirects already wait for their calls' flows`, { 'Retry-After': '1' });
    }
    this.size++;
    let wakes = this.byCall.get(callId);
    if (!wakes) this.byCall.set(callId, (wakes = new Set()));
    const mine = () => wake();
    wakes.add(mine);
    const reader = (this.reader ??= this.open());
    let released = false;
    return {
      ready: reader.ready,
      release: () => {
        if (released) return;
        released = true;
        this.size--;
        wakes.delete(mine);
        if (wakes.size === 0 && this.byCall.get(callId) === wakes) this.byCall.delete(callId);
        if (this.size === 0 && this.reader) {
          this.shut(this.reader);
          this.reader = null;
        }
      },
    };
  }

  stats(): FlowStartsStats {
    return { waiters: this.size, calls: this.byCall.size, reading: this.reader !== null, listeners: this.reader?.sub.listenerCount('event') ?? 0 };
  }

  private open(): Reader {
    // XREAD BLOCK holds its connection: the reader gets its own
    const redis = this.ctx.redis.duplicate({ connectionName: flowStartsReaderName() });
    redis.on('error', (err: unknown) => this.ctx.logger.warn({ err: String(err) }, 'twilio flow-wait reader connection error'));
    const sub = new EventSubscriber(redis, { blockMs: 500 });
    sub.on('event', this.onEvent);
    sub.on('error', (err: unknown) => this.ctx.logger.warn({ err: String(err) }, 'twilio flow-wait reader error'));
    const ready = sub.start();
    ready.catch(() => undefined); // each waiter sees the failure through `ready`
    return { redis, sub, ready };
  }

  private shut(r: Reader): void {
    r.sub.off('event', this.onEvent);
    // stop() returns once the blocking read does: at once, as the connection goes
    void r.ready.then(
      () => r.sub.stop(),
      () => undefined,
    );
    r.redis.disconnect();
  }
}

const watchers = new WeakMap<AppContext, FlowStarts>();

/** The context's watcher, made on first use (it holds nothing open while nobody waits). */
export function flowStarts(ctx: AppContext): FlowStarts {
  let w = watchers.get(ctx);
  if (!w) watchers.set(ctx, (w = new FlowStarts(ctx, ctx.config.twilioRedirectMaxWaiting)));
  return w;
}
