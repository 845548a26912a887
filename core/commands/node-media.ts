/**
 * Which media backend a media-app node runs its calls on (media-app/media-server/README.md): each node
 * writes `node-media:<node id>` → `embedded` | `fsmrf` with its heartbeat, expiring with it. control-api
 * reads it to refuse, before it sends a command, what the node's backend cannot do (on fsmrf: music on
 * hold of a conference member, which would wait behind the switch's conference application), with an error
 * naming the backend: the caller is never answered as if it had been done while the node drops it.
 * A node that wrote nothing (an older one) counts as embedded: the command goes as before.
 */
import type { Redis } from 'ioredis';
import { ApiError, serviceUnavailable } from '../errors';

export type NodeMediaBackend = 'embedded' | 'fsmrf';

/** Redis key (under REDIS_KEY_PREFIX) of a node's media backend. */
export const nodeMediaKey = (nodeId: string): string => `node-media:${nodeId}`;

/** What only the embedded engine does among the commands control-api sends a node. */
export const FSMRF_REFUSES = {
  memberMoh:
    "music on hold of a conference member (its music would wait behind the switch's conference application; a member's hold is the room's conference <room> hold, which takes the member out of the mix)",
} as const;

export type NodeMediaFeature = keyof typeof FSMRF_REFUSES;

/** The node's media backend; null when it wrote none. */
export async function nodeMediaBackend(redis: Redis, keyPrefix: string, nodeId: string): Promise<NodeMediaBackend | null> {
  let v: string | null;
  try {
    v = await redis.get(keyPrefix + nodeMediaKey(nodeId));
  } catch {
    throw serviceUnavailable();
  }
  return v === 'fsmrf' || v === 'embedded' ? v : null;
}

/**
 * Throws STATE_INVALID (409) when `nodeId` (null: no live node, nothing to check) runs its calls on a
 * backend that cannot do `feature`; the message names the feature and the backend, as media-app's
 * MediaBackendUnsupported does.
 */
export async function assertNodeMediaCan(redis: Redis, keyPrefix: string, nodeId: string | null, feature: NodeMediaFeature): Promise<void> {
  if (!nodeId) return;
  const backend = await nodeMediaBackend(redis, keyPrefix, nodeId);
  if (backend !== 'fsmrf') return;
  throw new ApiError('STATE_INVALID', `${FSMRF_REFUSES[feature]} is not available on the fsmrf media backend (MEDIA_SERVER=freeswitch://…) of the node that has this call`);
}
