// control-api/main.ts starts the account jobs through this hook.
import type { AppContext } from '../context';
import { startLifecycleScheduler, type LifecycleScheduler } from './scheduler';
import { startAlertsRetention } from './alerts-retention';
import { publishRecheck } from '../ws/guard';
import { EvalAudioSweep } from '../../core/evals/audio-removal';
import { storageBackend } from '../../core/storage/backend';

export { runLifecyclePass } from './account-lifecycle';
export { deleteCustomerAccount, accountEvents } from './account-deletion';

/** The periodic jobs: the account lifecycle pass, the Twilio alerts retention pass and the eval audio sweep; close() stops them. */
export async function startJobs(ctx: AppContext): Promise<LifecycleScheduler> {
  const prefix = `${ctx.config.redisKeyPrefix}bull`;
  const alerts = await startAlertsRetention({
    db: ctx.db,
    redisUrl: ctx.config.redisUrl,
    prefix,
    days: ctx.config.twilioAlertsRetentionDays,
    everyMs: ctx.config.twilioAlertsRetentionEveryMs,
    log: ctx.logger,
  });
  const lifecycle = await startLifecycleScheduler({
    db: ctx.db,
    redisUrl: ctx.config.redisUrl,
    prefix,
    log: ctx.logger,
    // open WebSockets of accounts that just expired or were deleted close now, not at the next pass
    onPass: (r) => {
      for (const id of [...r.expired, ...r.deleted]) void publishRecheck(ctx, id);
    },
  }).catch(async (e: unknown) => {
    await alerts.close();
    throw e;
  });
  // eval call audio past its retention, and deletions the object store refused (core/evals/audio-removal.ts)
  const evalAudio = new EvalAudioSweep({
    db: ctx.db,
    store: storageBackend(ctx.config).files,
    logger: ctx.logger,
    retentionDays: ctx.config.evalsAudioRetentionDays,
    everyMs: ctx.config.evalsAudioSweepMs,
  });
  evalAudio.start();
  return {
    async close() {
      await Promise.all([lifecycle.close(), alerts.close(), evalAudio.close()]);
    },
  };
}
