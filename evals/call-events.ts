/**
 * What wakes an observation's settle wait (observe.ts): the platform's events, read by one
 * EventSubscriber on a Redis connection of its own (XREAD BLOCK holds it), open only while at least one
 * observation waits: the first watch opens it, the last release closes it and its connection. An event
 * of the watched customer's calls or AI conversations wakes its watchers; it is a hint to read the
 * records again, never the state itself.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../core/logger';
import { EventSubscriber, type PlatformEvent } from '../core/events/bus';

export interface CallWatch {
  /** Resolves once the reader reads: every event published from then on wakes the watcher. */
  ready: Promise<void>;
  /** Ends this watch (idempotent); the last one closes the reader. */
  release(): void;
}

interface Reader {
  redis: Redis;
  sub: EventSubscriber;
  ready: Promise<void>;
}

export class CallEvents {
  private readonly byCustomer = new Map<string, Set<() => void>>();
  private size = 0;
  private reader: Reader | null = null;

  constructor(private readonly deps: { redis: Redis; logger: Logger }) {}

  private readonly onEvent = (e: PlatformEvent): void => {
    if (e.resource !== 'call' && e.resource !== 'aicall') return;
    for (const wake of [...(this.byCustomer.get(e.customer_id) ?? [])]) wake();
  };

  watch(customerId: string, wake: () => void): CallWatch {
    this.size++;
    let wakes = this.byCustomer.get(customerId);
    if (!wakes) this.byCustomer.set(customerId, (wakes = new Set()));
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
        if (wakes.size === 0 && this.byCustomer.get(customerId) === wakes) this.byCustomer.delete(customerId);
        if (this.size === 0 && this.reader) {
          this.shut(this.reader);
          this.reader = null;
        }
      },
    };
  }

  /** Whether the reader (and its connection) is open. */
  get reading(): boolean {
    return this.reader !== null;
  }

  private open(): Reader {
    const redis = this.deps.redis.duplicate({ connectionName: `evals-call-events-${process.pid}` });
    redis.on('error', (err: unknown) => this.deps.logger.warn({ err: String(err) }, 'evals event reader connection error'));
    const sub = new EventSubscriber(redis, { blockMs: 500 });
    sub.on('event', this.onEvent);
    sub.on('error', (err: unknown) => this.deps.logger.warn({ err: String(err) }, 'evals event reader error'));
    const ready = sub.start();
    ready.catch(() => undefined); // each watcher sees the failure through `ready`
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
