/**
 * How each media-app node's rtpengine is doing, as its heartbeat reports it (one Redis hash, a field
 * per node, each entry valid until its `until`), and how /readyz reads it. control-api never talks to
 * rtpengine itself: the node that relays through it is the one that knows.
 */
import type { Redis } from 'ioredis';

export type RelayHealthStatus = 'up' | 'down' | 'unknown' | 'not_configured';

export interface RelayHealthEntry {
  status: RelayHealthStatus;
  /** rtpengine's ng address (host:port), null when not configured. */
  ng: string | null;
  /** ms since the epoch after which the entry is stale (the node stopped beating). */
  until: number;
}

const KEY = 'rtpengine-health';

export async function writeRelayHealth(redis: Redis, prefix: string, nodeId: string, entry: RelayHealthEntry): Promise<void> {
  await redis.hset(prefix + KEY, nodeId, JSON.stringify(entry));
}

export async function removeRelayHealth(redis: Redis, prefix: string, nodeId: string): Promise<void> {
  await redis.hdel(prefix + KEY, nodeId);
}

/** The fresh entries, by node id (stale ones are dropped from the hash). */
export async function readRelayHealth(redis: Redis, prefix: string, now = Date.now()): Promise<Record<string, RelayHealthEntry>> {
  const all = await redis.hgetall(prefix + KEY);
  const out: Record<string, RelayHealthEntry> = {};
  const stale: string[] = [];
  for (const [node, raw] of Object.entries(all)) {
    try {
      const e = JSON.parse(raw) as RelayHealthEntry;
      if (typeof e.until === 'number' && e.until >= now) out[node] = e;
      else stale.push(node);
    } catch {
      stale.push(node);
    }
  }
  if (stale.length) await redis.hdel(prefix + KEY, ...stale).catch(() => undefined);
  return out;
}
