/**
 * The events a Calls redirect waiting for its call's flow wakes on (flow-wait.ts, issue 54): media-app
 * publishes `activeflow_created` (reference_type call, reference_id the call) once the flow's record is
 * written, and `call_*` when the call moves (terminating, hangup). One reader per control-api copy (an
 * EventSubscriber on a connection of its own, as the WebSocket fan-out's), open only while at least one
 * redirect waits (core/events/keyed-wakes.ts).
 * At most `max` wait at once; one more is refused (429, Twilio's 20429) rather than queued.
 *
 *   const w = flowStarts(ctx).watch(callId, () => wake());   // throws TwilioError 429 when full
 *   try { await w.ready; ...read the state, wait for wake()... } finally { w.release(); }
 */
import type { AppContext } from '../context';
import { eventStreamKey, type PlatformEvent } from '../../core/events/bus';
import { KeyedWakes, type KeyedWakesStats, type KeyedWatch } from '../../core/events/keyed-wakes';
import { TwilioError } from './errors';

/** The reader's Redis connection name (CLIENT LIST shows it while it reads). */
export const flowStartsReaderName = (): string => `twilio-flow-wait-${process.pid}`;

export type FlowWatch = KeyedWatch;

/** KeyedWakes' figures, its keys being calls. */
export type FlowStartsStats = Omit<KeyedWakesStats, 'keys'> & { calls: number };

/** The call id an event is about, when it may end a wait: a call's move, or the start of a call's flow. */
function callOf(e: PlatformEvent): string | null {
  if (e.resource === 'call') return e.resource_id;
  if (e.event_type === 'activeflow_created' && e.data.reference_type === 'call' && typeof e.data.reference_id === 'string') return e.data.reference_id;
  return null;
}

export class FlowStarts {
  private readonly wakes: KeyedWakes;

  constructor(
    ctx: AppContext,
    private readonly max: number,
  ) {
    this.wakes = new KeyedWakes({
      redis: ctx.redis,
      stream: eventStreamKey(ctx.config.redisKeyPrefix),
      logger: ctx.logger,
      connectionName: flowStartsReaderName(),
      label: 'twilio flow-wait',
      keyOf: callOf,
    });
  }

  /** Watches `callId`'s events: `wake` runs on each (a hint to read the state again, never the state itself). */
  watch(callId: string, wake: () => void): FlowWatch {
    if (this.wakes.waiters >= this.max) {
      throw new TwilioError(429, 20429, `Too Many Requests: ${this.max} redirects already wait for their calls' flows`, { 'Retry-After': '1' });
    }
    return this.wakes.watch(callId, wake);
  }

  stats(): FlowStartsStats {
    const { keys, ...rest } = this.wakes.stats();
    return { ...rest, calls: keys };
  }
}

const watchers = new WeakMap<AppContext, FlowStarts>();

/** The context's watcher, made on first use (it holds nothing open while nobody waits). */
export function flowStarts(ctx: AppContext): FlowStarts {
  let w = watchers.get(ctx);
  if (!w) watchers.set(ctx, (w = new FlowStarts(ctx, ctx.config.twilioRedirectMaxWaiting)));
  return w;
}
