/**
 * Where a live speech command goes: the node that owns the call, or the node hosting the
 * conference (core/conferences/commands.ts). Null when no live node has it.
 */
import type { Redis } from 'ioredis';
import type { CommandBus } from '../commands/bus';
import { conferenceHost } from '../conferences/commands';

export async function nodeOf(bus: CommandBus, redis: Redis, keyPrefix: string, referenceType: string, referenceId: string): Promise<string | null> {
  if (referenceType === 'call') return bus.callOwner(referenceId);
  if (referenceType === 'confbridge') return conferenceHost(redis, keyPrefix, referenceId);
  return null;
}
