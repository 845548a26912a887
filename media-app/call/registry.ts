/**
 * The live calls of this node, and the call → node map in Redis that control-api reads to send a
 * live call's commands to the node that owns it (core/commands/contracts.ts callNodeKey). The
 * `calls_active` gauge (core/metrics.ts) follows the set: one per call while this node holds it.
 */
import type { Redis } from 'ioredis';
import { callNodeKey } from '../../core/commands/contracts';
import { MEDIA_NODES_KEY, nodeCallsKey } from '../../core/calls/node-keys';
import { platformMetrics } from '../../core/metrics';
import type { CallDirection } from '../../core/calls/model';

export interface OwnedCall {
  readonly id: string;
  /** The call record as this node sees it (the direction labels calls_active). */
  readonly row: { readonly direction: CallDirection };
  /** Ends the call locally (shutdown, commands). Idempotent. */
  hangup(reason: string): Promise<void>;
}

export class CallRegistry<C extends OwnedCall = OwnedCall> {
  private readonly live = new Map<string, C>();
  private readonly addedListeners = new Set<(call: C) => void>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly nodeId: string,
  ) {}

  /** Calls `fn` with each call this node takes from now on (the presence source follows extension legs); returns the way to stop. */
  onAdded(fn: (call: C) => void): () => void {
    this.addedListeners.add(fn);
    return () => this.addedListeners.delete(fn);
  }

  async add(call: C): Promise<void> {
    if (!this.live.has(call.id)) platformMetrics.callsActive.labels(call.row.direction).inc();
    this.live.set(call.id, call);
    for (const fn of this.addedListeners) fn(call);
    // Kept a day at most: a node that dies leaves a key its expired heartbeat makes meaningless.
    // The node's call set tells the node sweeper (core/calls/node-sweep.ts) what to finalise if it dies.
    await this.redis
      .multi()
      .set(this.prefix + callNodeKey(call.id), this.nodeId, 'EX', 86_400)
      .sadd(this.prefix + nodeCallsKey(this.nodeId), call.id)
      .sadd(this.prefix + MEDIA_NODES_KEY, this.nodeId)
      .exec()
      .catch(() => undefined);
  }

  get(id: string): C | undefined {
    return this.live.get(id);
  }

  async remove(id: string): Promise<void> {
    const call = this.live.get(id);
    if (!call) return;
    this.live.delete(id);
    platformMetrics.callsActive.labels(call.row.direction).dec();
    await this.redis
      .multi()
      .del(this.prefix + callNodeKey(id))
      .srem(this.prefix + nodeCallsKey(this.nodeId), id)
      .exec()
      .catch(() => undefined);
  }

  get size(): number {
    return this.live.size;
  }

  all(): C[] {
    return [...this.live.values()];
  }

  async hangupAll(): Promise<void> {
    await Promise.allSettled(this.all().map((c) => c.hangup('normal')));
  }
}
