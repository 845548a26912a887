// control-api/main.ts starts the account jobs through this hook.
import type { AppContext } from '../context';
import { startLifecycleScheduler, type LifecycleScheduler } from './scheduler';
import { publishRecheck } from '../ws/guard';

export { runLifecyclePass } from './account-lifecycle';
export { deleteCustomerAccount, accountEvents } from './account-deletion';

export async function startJobs(ctx: AppContext): Promise<LifecycleScheduler> {
  return startLifecycleScheduler({
    db: ctx.db,
    redisUrl: ctx.config.redisUrl,
    prefix: `${ctx.config.redisKeyPrefix}bull`,
    log: ctx.logger,
    // open WebSockets of accounts that just expired or were deleted close now, not at the next pass
    onPass: (r) => {
      for (const id of [...r.expired, ...r.deleted]) void publishRecheck(ctx, id);
    },
  });
}
