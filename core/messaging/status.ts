/**
 * The per-target delivery state machine (voipbin message target status):
 *
 *   queued ──▶ sent ──▶ delivered
 *     │  │       └────▶ failed | dlr_timeout (no delivery report in time)
 *     │  └──▶ gw_timeout (the provider did not answer the send)
 *     └──▶ failed (refused by the provider)
 *
 * Reports arrive out of order (a delivery receipt can overtake "sent"), so a move is allowed from
 * every earlier state; delivered and failed are final. `received` is the only state of inbound
 * targets.
 */
import type { TargetStatus } from '../repos/messages';

const FROM: Record<TargetStatus, readonly TargetStatus[]> = {
  received: [],
  queued: [],
  sent: ['queued', 'gw_timeout'],
  gw_timeout: ['queued'],
  dlr_timeout: ['sent'],
  // Late reports still settle a timed-out target.
  delivered: ['queued', 'sent', 'gw_timeout', 'dlr_timeout'],
  failed: ['queued', 'sent', 'gw_timeout', 'dlr_timeout'],
};

/** The states a target may be in for a move to `to`. */
export function allowedFrom(to: TargetStatus): readonly TargetStatus[] {
  return FROM[to];
}

export function canMove(from: TargetStatus, to: TargetStatus): boolean {
  return FROM[to].includes(from);
}

export const FINAL_STATUSES: readonly TargetStatus[] = ['delivered', 'failed', 'received'];
