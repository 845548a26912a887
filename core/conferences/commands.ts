/**
 * Conference commands control-api → media-app, and where they go. A conference lives on one
 * media-app node (its confbridge: a media-engine Conference); the node that hosts it is kept in
 * Redis under conferenceNodeKey, like the call → node map. `conference.start` goes to the shared
 * queue (any node may host a new conference); every other command goes to the hosting node. The
 * commands themselves are declared in core/commands/protocol.ts.
 */
import type { Redis } from 'ioredis';
import type { CommandBus, BusEnvelope } from '../commands/bus';
import { ORIGINATE_QUEUE, nodeAliveKey } from '../commands/contracts';
import { serviceUnavailable } from '../errors';

/** Redis key (under REDIS_KEY_PREFIX) of the node hosting a conference. */
export const conferenceNodeKey = (conferenceId: string): string => `conference-node:${conferenceId}`;

/** The live node hosting a conference, or null (none, or its heartbeat expired). */
export async function conferenceHost(redis: Redis, keyPrefix: string, conferenceId: string): Promise<string | null> {
  try {
    const node = await redis.get(keyPrefix + conferenceNodeKey(conferenceId));
    if (!node) return null;
    return (await redis.exists(keyPrefix + nodeAliveKey(node))) ? node : null;
  } catch {
    throw serviceUnavailable();
  }
}

export class ConferenceCommands {
  constructor(
    private readonly bus: CommandBus,
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  start(conferenceId: string): Promise<BusEnvelope> {
    return this.bus.enqueue(ORIGINATE_QUEUE, { type: 'conference.start', conferenceId });
  }

  host(conferenceId: string): Promise<string | null> {
    return conferenceHost(this.redis, this.keyPrefix, conferenceId);
  }

  /** Sends to the hosting node; null when no live node hosts the conference. */
  async toHost(command: Exclude<Parameters<CommandBus['toNode']>[1], { type: 'conference.start' }> & { conferenceId: string }): Promise<BusEnvelope | null> {
    const node = await this.host(command.conferenceId);
    if (!node) return null;
    return this.bus.toNode(node, command);
  }
}
