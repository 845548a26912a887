/**
 * What wakes an observation's settle wait (observe.ts): the platform's events, read by one
 * EventSubscriber on a Redis connection of its own, open only while at least one observation waits
 * (core/events/keyed-wakes.ts). An event of the watched customer's calls or AI conversations wakes its
 * watchers; it is a hint to read the records again, never the state itself.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../core/logger';
import { KeyedWakes, type KeyedWatch } from '../core/events/keyed-wakes';

export type CallWatch = KeyedWatch;

export class CallEvents {
  private readonly wakes: KeyedWakes;

  /** `stream`: the platform's event stream, eventStreamKey(REDIS_KEY_PREFIX). */
  constructor(deps: { redis: Redis; stream: string; logger: Logger }) {
    this.wakes = new KeyedWakes({
      ...deps,
      connectionName: `evals-call-events-${process.pid}`,
      label: 'evals event',
      keyOf: (e) => (e.resource === 'call' || e.resource === 'aicall' ? e.customer_id : null),
    });
  }

  /** Watches the customer's calls and AI conversations: `wake` runs on each of their events. */
  watch(customerId: string, wake: () => void): CallWatch {
    return this.wakes.watch(customerId, wake);
  }

  /** Whether the reader (and its connection) is open. */
  get reading(): boolean {
    return this.wakes.reading;
  }
}
