/**
 * One CommandBus per AppContext, made on first use (AppContext has no slot for it yet). Close it with
 * closeCommandBus when the app stops.
 */
import { CommandBus } from '../../core/commands/bus';
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
