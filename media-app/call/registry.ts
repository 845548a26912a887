/**
 * The live calls of this node, and the call → node map in Redis that control-api reads to send a
 * live call's commands to the node that owns it (core/queue/contracts.ts callNodeKey).
 */
import type { Redis } from 'ioredis';
import { callNodeKey } from '../../core/queue/contracts';

export interface OwnedCall {
  readonly id: string;
  /** Ends the call locally (shutdown, commands). Idempotent. */
  hangup(reason: string): Promise<void>;
}

export class CallRegistry<C extends OwnedCall = OwnedCall> {
  private readonly live = new Map<string, C>();

  constructor(private readonly redis: Redis, private readonly prefix: string, readonly nodeId: string) {}

  async add(call: C): Promise<void> {
    this.live.set(call.id, call);
    // Kept a day at most: a node that dies leaves a key its expired heartbeat makes meaningless.
    await this.redis.set(this.prefix + callNodeKey(call.id), this.nodeId, 'EX', 86_400).catch(() => undefined);
  }

  get(id: string): C | undefined {
    return this.live.get(id);
  }

  async remove(id: string): Promise<void> {
    if (!this.live.delete(id)) return;
    await this.redis.del(this.prefix + callNodeKey(id)).catch(() => undefined);
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
