/**
 * Redis keys (under REDIS_KEY_PREFIX) that let someone else clean up after a media-app node dies:
 * the nodes that ever owned calls, and each node's live calls. A node's heartbeat
 * (core/commands/contracts.ts nodeAliveKey) says whether it is still there; the node sweeper
 * (core/calls/node-sweep.ts) finalises the calls of a node whose heartbeat expired.
 */
import { sha256Hex } from '../credentials';

/** Set of node ids that own (or owned) calls and have not been swept since. */
export const MEDIA_NODES_KEY = 'media-nodes';
/** Set of the call ids a node owns right now. */
export const nodeCallsKey = (nodeId: string): string => `node-calls:${nodeId}`;
/** Held while one sweeper works on a dead node, so two control-api copies do not both sweep it. */
export const nodeSweepLockKey = (nodeId: string): string => `node-sweep-lock:${nodeId}`;

/**
 * The node that holds a call, as clients see it (the Call's `node_id`): an opaque, stable name
 * (`node-` + 10 hex of SHA-256 of the node id), so a call's node can be told apart without showing
 * the host name and pid a default node id is made of. Empty while no node holds the call.
 * media-app logs it next to its node id at start.
 */
export const nodeLabel = (nodeId: string): string => (nodeId ? `node-${sha256Hex(nodeId).slice(0, 10)}` : '');
