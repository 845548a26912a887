/**
 * The connects ringing an extension, as every node sees them (docs/pbx.md "Pickup", "Across nodes"):
 * one Redis hash per customer, `pickup:<customer>`, the ringing connect's master call id → the node
 * running it, when it started ringing and the extensions its legs ring. A node lists a connect while
 * its legs ring and withdraws it once settled (media-app/call/pickable.ts); a pickup on another node
 * reads it to find whom to ask. The hash is a hint: the node running the connect checks again.
 * Entries of a node that died are skipped by the reader (its heartbeat) and expire with the hash.
 */
import type { Redis } from 'ioredis';

export interface RingingEntry {
  readonly master_call_id: string;
  readonly node_id: string;
  /** Unix ms. */
  readonly since: number;
  /** The extensions (numbers) its legs ring. */
  readonly extensions: readonly string[];
}

const key = (prefix: string, customerId: string) => `${prefix}pickup:${customerId}`;
/** A hash no connect touched for a day goes (entries of a node that died before withdrawing them). */
const TTL_MS = 86_400_000;

export function ringingIndex(redis: Redis, prefix: string) {
  return {
    async add(customerId: string, e: RingingEntry): Promise<void> {
      await redis.multi().hset(key(prefix, customerId), e.master_call_id, JSON.stringify(e)).pexpire(key(prefix, customerId), TTL_MS).exec();
    },
    async remove(customerId: string, masterCallId: string): Promise<void> {
      await redis.hdel(key(prefix, customerId), masterCallId);
    },
    /** The customer's ringing connects, oldest first. */
    async list(customerId: string): Promise<RingingEntry[]> {
      const all = await redis.hgetall(key(prefix, customerId));
      return Object.values(all)
        .map((v) => JSON.parse(v) as RingingEntry)
        .sort((a, b) => a.since - b.since);
    },
  };
}
