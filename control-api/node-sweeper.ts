/**
 * control-api runs the node sweeper (core/calls/node-sweep.ts): it outlives any media-app node, so
 * the calls, recordings and queued commands of a node that died are finalised even when it was the
 * only one. Copies of control-api take turns through the sweep lock.
 */
import type { Attachment } from './attachments';
import { eventPublisher } from '../core/events/bus';
import { NodeSweeper } from '../core/calls/node-sweep';

export const attachment: Attachment = {
  name: 'node-sweeper',
  async start(_server, ctx) {
    const sweeper = new NodeSweeper({
      db: ctx.db,
      redis: ctx.redis,
      keyPrefix: ctx.config.redisKeyPrefix,
      events: eventPublisher(ctx),
      logger: ctx.logger.child({ component: 'node-sweeper' }),
      dataDir: ctx.config.dataDir,
    });
    sweeper.start();
    return { close: () => sweeper.stop() };
  },
};
