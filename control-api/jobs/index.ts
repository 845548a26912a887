// control-api/main.ts starts the account jobs through this hook.
import type { AppContext } from '../context';
import { startLifecycleScheduler, type LifecycleScheduler } from './scheduler';

export { runLifecyclePass } from './account-lifecycle';
export { deleteCustomerAccount, accountEvents } from './account-deletion';

export async function startJobs(ctx: AppContext): Promise<LifecycleScheduler> {
  return startLifecycleScheduler({
    db: ctx.db,
    redisUrl: ctx.config.redisUrl,
    prefix: `${ctx.config.redisKeyPrefix}bull`,
    log: ctx.logger,
  });
}
