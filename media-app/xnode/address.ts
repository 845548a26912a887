/**
 * Where a node's sip-server takes node-to-node legs: each node writes `node-sip:<node id>` →
 * `host:port` (SIP_ADVERTISED_HOST, else the address sip-server listens on) in Redis at start and
 * removes it at stop. Whether the node is alive is its heartbeat (node-alive:<node>), not this key.
 */
import type { Redis } from 'ioredis';
import { nodeAliveKey } from '../../core/commands/contracts';
import { sipListeningPoint, type Srf } from '../kit/srf';

export const nodeSipKey = (nodeId: string): string => `node-sip:${nodeId}`;

/** Advertises this node's SIP address; resolves with a function that withdraws it. */
export async function advertiseNodeSip(redis: Redis, prefix: string, nodeId: string, srf: Srf, advertisedHost: string | undefined): Promise<() => Promise<void>> {
  const point = sipListeningPoint(srf, 'udp');
  if (!point) return async () => undefined;
  const host = advertisedHost ?? point.host;
  await redis.set(prefix + nodeSipKey(nodeId), `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${point.port}`);
  return async () => void (await redis.del(prefix + nodeSipKey(nodeId)).catch(() => 0));
}

/** The SIP `host:port` of a live node, or null (unknown, or its heartbeat expired). */
export async function liveNodeSip(redis: Redis, prefix: string, nodeId: string): Promise<string | null> {
  const [addr, alive] = await Promise.all([redis.get(prefix + nodeSipKey(nodeId)), redis.exists(prefix + nodeAliveKey(nodeId))]);
  return addr && alive ? addr : null;
}

export async function nodeAlive(redis: Redis, prefix: string, nodeId: string): Promise<boolean> {
  return (await redis.exists(prefix + nodeAliveKey(nodeId))) === 1;
}
