// control-api/main.ts starts the account jobs through this hook.
import type { AppContext } from '../context';
import { startLifecycleScheduler, type LifecycleScheduler } from './scheduler';
import { startAlertsRetention } from './alerts-retention';
import { publishRecheck } from '../ws/guard';

export { runLifecyclePass } from './account-lifecycle';
export { deleteCustomerAccount, accountEvents } from './account-deletion';

/** The periodic jobs: the account lifecycle pass and the Twilio alerts retention pass; close() stops both. */
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
  return {
    async close() {
      await Promise.all([lifecycle.close(), alerts.close()]);
    },
  };
}
