import type { z } from 'zod';
import type * as control from '../../../core/flow/options/control';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';
import { compare, falseTarget } from './compare';

export type ConditionDatetimeOption = z.infer<typeof control.condition_datetime>;

/**
 * Field by field, as voipbin does: weekdays (when given) must contain today; then each set field of
 * month, day, hour and minute must satisfy `now <condition> field`. Wildcards: minute and hour -1,
 * day and month 0 or -1. Time is UTC.
 */
export function datetimeMatches(o: ConditionDatetimeOption, nowMs: number): boolean {
  const now = new Date(nowMs);
  if (o.weekdays && o.weekdays.length > 0 && !o.weekdays.includes(now.getUTCDay())) return false;
  const checks: [number | undefined, number, number][] = [
    [o.month, now.getUTCMonth() + 1, 1],
    [o.day, now.getUTCDate(), 1],
    [o.hour, now.getUTCHours(), 0],
    [o.minute, now.getUTCMinutes(), 0],
  ];
  for (const [want, current, min] of checks) {
    if (want === undefined || want < min) continue;
    if (!compare(o.condition, current, want)) return false;
  }
  return true;
}

export class ConditionDatetime extends FlowTask<ConditionDatetimeOption> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    return datetimeMatches(this.option, ctx.clock.now()) ? NEXT : falseTarget(this.option.false_target_id);
  }
}
