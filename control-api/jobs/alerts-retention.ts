// Twilio's debugger records (twilio_alerts: the Monitor API's Alerts, the 2010 API's Notifications) are
// kept TWILIO_ALERTS_RETENTION_DAYS (default 30, as Twilio keeps them): a BullMQ repeatable job
// (scheduler.ts, as the account lifecycle pass) deletes older ones every TWILIO_ALERTS_RETENTION_EVERY_MS.
// The age is read off core/clock (tests set it), so a pass is exact to the millisecond, not to the run.
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { clock } from '../../core/clock';
import { twilioAlertsRepo } from '../../core/repos/twilio-alerts';
import { startRepeatingJob, type LifecycleScheduler } from './scheduler';

export const ALERTS_RETENTION_QUEUE = 'twilio-alerts-retention';
const DAY = 86_400_000;

/** Deletes the records older than `days` days (by clock.now()); resolves how many went. */
export async function runAlertsRetention(db: Knex, days: number): Promise<number> {
  return twilioAlertsRepo(db).pruneBefore(new Date(clock.now().getTime() - days * DAY));
}

export interface AlertsRetentionOptions {
  db: Knex;
  redisUrl: string;
  prefix?: string;
  days: number;
  everyMs: number;
  log?: Logger;
  onPass?: (deleted: number) => void;
}

export function startAlertsRetention(o: AlertsRetentionOptions): Promise<LifecycleScheduler> {
  return startRepeatingJob({
    queue: ALERTS_RETENTION_QUEUE,
    schedulerId: 'twilio-alerts-retention-pass',
    jobName: 'alerts-retention-pass',
    redisUrl: o.redisUrl,
    prefix: o.prefix,
    everyMs: o.everyMs,
    log: o.log,
    run: async () => {
      const deleted = await runAlertsRetention(o.db, o.days);
      if (deleted) o.log?.info({ deleted, days: o.days }, 'twilio alerts retention pass');
      o.onPass?.(deleted);
      return { deleted };
    },
  });
}
