/**
 * The transfer subsystem: transfer.start from POST /transfers (sent to the node owning the transferer's
 * call), REFER inside any call of this node, and SIP MESSAGE between extensions. It starts the groupcall subsystem it rings targets
 * with, so the node's list (media-app/subsystems.ts) has one entry for both.
 */
import '../../core/groupcalls/commands';
import { transfersRepo } from '../../core/repos/transfers';
import { onInDialogRequest } from '../call/in-dialog';
import { runnerFor, subsystem as groupcalls } from '../groupcall';
import type { Subsystem } from '../subsystem';
import { TransferEngine } from './engine';
import { referHandler } from './refer';
import { messageRelay } from '../messaging/relay';

const claimKey = (id: string) => `transfer-claim:${id}`;

export const subsystem: Subsystem = {
  name: 'xfer',
  async start(ctx) {
    const rings = await groupcalls.start(ctx);
    const engine = new TransferEngine(ctx.factory, runnerFor(ctx.factory));
    onInDialogRequest(ctx.deps, 'refer', referHandler(ctx.deps, engine));
    // out-of-dialog MESSAGE between extensions (the srf verb is routed to us from now on)
    ctx.deps.srf.message(messageRelay(ctx.deps));
    ctx.commands.on('transfer.start', async (c) => {
      const claimed = await ctx.deps.redis.set(ctx.deps.config.redisKeyPrefix + claimKey(c.transferId), ctx.nodeId, 'EX', 86_400, 'NX');
      if (claimed !== 'OK') return;
      const row = await transfersRepo(ctx.deps.db).get(c.transferId);
      if (!row || row.status !== 'initiating') return;
      // a transfer can last minutes (attended): it runs beyond the command
      void engine.execute(row).catch((err: Error) => ctx.logger.warn({ err: err.message, transfer: row.id }, 'transfer failed'));
    });
    return { stop: () => rings.stop() };
  },
};
