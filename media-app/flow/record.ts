/** The Activeflow record (declared in core/flow/activeflow.ts) and the time format its actions are stamped with. */

export type { ActiveflowRecord, ActiveflowStatus, EndReason, ExecutedAction, ReferenceType } from '../../core/flow/activeflow';

let lastMs = NaN;
let lastTm = '';

/** RFC 3339 with microseconds, as the rest of the API prints times (cached: many actions share a millisecond). */
export function tm(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastTm = new Date(ms).toISOString().slice(0, 23) + '000Z';
  }
  return lastTm;
}
