/** The credit guard as a node subsystem (media-app/subsystems.ts). */
import type { Subsystem } from '../subsystem';
import { CreditGuard } from './credit-guard';

export { CreditGuard } from './credit-guard';

export const subsystem: Subsystem = {
  name: 'credit-guard',
  async start(ctx) {
    const guard = new CreditGuard(ctx.deps.db, ctx.deps.calls, ctx.deps.app.creditGuardIntervalMs, ctx.logger);
    guard.start();
    return { stop: () => guard.stop() };
  },
};
