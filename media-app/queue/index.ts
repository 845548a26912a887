/** The queue subsystem of a media-app node: queue_join, dispatch to agents, the kick command. */
import type { Subsystem } from '../subsystem';
import { QueueService } from './service';

declare module '../flow/services' {
  interface FlowServices {
    queues?: QueueService;
  }
}

export { QueueService };

export const subsystem: Subsystem = {
  name: 'queue',
  async start(ctx) {
    const service = new QueueService(ctx.factory);
    ctx.services.queues = service;
    ctx.commands.on('queuecall.kick', (c) => service.kick(c.queuecallId));
    return {
      async stop() {
        if (ctx.services.queues === service) delete ctx.services.queues;
        await service.stop();
      },
    };
  },
};
