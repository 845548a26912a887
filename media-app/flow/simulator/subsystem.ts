/** The flow simulator of a media-app node: answers the API's simulations (service.ts). */
import type { Subsystem } from '../../subsystem';
import { startSimulatorService } from './service';

export const subsystem: Subsystem = {
  name: 'flow-simulator',
  async start(ctx) {
    const { config, egress } = ctx.deps;
    const service = startSimulatorService({ redisUrl: config.redisUrl, keyPrefix: config.redisKeyPrefix, egress, logger: ctx.logger });
    return { stop: () => service.close() };
  },
};
