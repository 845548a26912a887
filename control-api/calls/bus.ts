/**
 * One CommandBus per AppContext, made on first use (AppContext has no slot for it yet). Close it with
 * closeCommandBus when the app stops. And the node-media check of the node a command would go to.
 */
import { CommandBus } from '../../core/commands/bus';
import { assertNodeMediaCan, type NodeMediaFeature } from '../../core/commands/node-media';
import { conferenceHost } from '../../core/conferences/commands';
import type { AppContext } from '../context';

const buses = new WeakMap<AppContext, CommandBus>();

export function commandBus(ctx: AppContext): CommandBus {
  let bus = buses.get(ctx);
  if (!bus) {
    bus = new CommandBus({ redis: ctx.redis, keyPrefix: ctx.config.redisKeyPrefix });
    buses.set(ctx, bus);
  }
  return bus;
}

export async function closeCommandBus(ctx: AppContext): Promise<void> {
  const bus = buses.get(ctx);
  buses.delete(ctx);
  await bus?.close();
}

/**
 * What the media backend of the node that owns the call cannot do is refused here (409,
 * core/commands/node-media.ts), never sent to be dropped there.
 */
export async function assertCallOwnerCan(ctx: AppContext, callId: string, feature: NodeMediaFeature): Promise<void> {
  await assertNodeMediaCan(ctx.redis, ctx.config.redisKeyPrefix, await commandBus(ctx).callOwner(callId), feature);
}

/** The same for the node that hosts the conference's room. */
export async function assertConferenceHostCan(ctx: AppContext, conferenceId: string, feature: NodeMediaFeature): Promise<void> {
  await assertNodeMediaCan(ctx.redis, ctx.config.redisKeyPrefix, await conferenceHost(ctx.redis, ctx.config.redisKeyPrefix, conferenceId), feature);
}
