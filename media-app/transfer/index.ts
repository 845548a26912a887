/**
 * The transfer subsystem: transfer.start from POST /transfers (sent to the node owning the transferer's
 * call) and REFER inside any call of this node. It starts the groupcall subsystem it rings targets
 * with, so the node's list (media-app/subsystems.ts) has one entry for both.
 */
import '../../core/groupcalls/commands';
import { transfersRepo } from '../../core/repos/transfers';
import { onInDialogRequest } from '../call/live-call';
import { runnerFor, subsystem as groupcalls } from '../groupcall';
import type { Subsystem } from '../subsystem';
import { TransferEngine } from './engine';
import { referHandler } from './refer';

const claimKey = (id: string) => `transfer-claim:${id}`;

export const subsystem: Subsystem = {
  name: 'groupcalls-transfers',
  async start(ctx) {
    const rings = await groupcalls.start(ctx);
    const engine = new TransferEngine(ctx.factory, runnerFor(ctx.factory));
    onInDialogRequest(ctx.deps, 'refer', referHandler(ctx.deps, engine));
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
