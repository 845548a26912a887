/**
 * Campaign, campaigncall and outdial target enums and rules (reference schemas CampaignManager*), pure so the routes
 * and the runner share them. docs/campaigns.md says where we decided what the reference left open.
 */
import type { HangupReason } from '../calls/model';

export const CAMPAIGN_TYPES = ['call', 'flow'] as const;
export type CampaignType = (typeof CAMPAIGN_TYPES)[number];
export const CAMPAIGN_STATUSES = ['stop', 'stopping', 'run'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];
export const END_HANDLES = ['stop', 'continue'] as const;
export type EndHandle = (typeof END_HANDLES)[number];

export type CampaigncallStatus = 'dialing' | 'progressing' | 'done';
export type CampaigncallResult = '' | 'success' | 'fail';
export type CampaigncallReferenceType = 'none' | 'call' | 'flow';
export type OutdialtargetStatus = 'idle' | 'progressing' | 'done';

/** Destinations per target (destination_0..4) and their try counts. */
export const DESTINATIONS = 5;

/** service_level: without a queue the most campaign calls live at once, with one a percentage of its available agents (core/campaigns/pacing.ts). */
export const SERVICE_LEVEL_MIN = 1;
export const SERVICE_LEVEL_MAX = 1000;

/**
 * What PUT /campaigns/{id}/status does from each status. `run` from stop starts dialling; `stop`
 * from run becomes stopping while calls are live (the runner finishes it), stop when none are.
 * Asking for the status a campaign already has (or is heading to) changes nothing.
 */
export type StatusRequest = 'run' | 'stop';
export type StatusDecision = { kind: 'same' } | { kind: 'invalid'; why: string } | { kind: 'to'; status: CampaignStatus };

export function decideStatus(current: CampaignStatus, wanted: StatusRequest, liveCalls: number): StatusDecision {
  if (wanted === 'run') {
    if (current === 'run') return { kind: 'same' };
    if (current === 'stopping') return { kind: 'invalid', why: 'the campaign is stopping; run it again once it is stop' };
    return { kind: 'to', status: 'run' };
  }
  if (current === 'stop' || current === 'stopping') return { kind: 'same' };
  return { kind: 'to', status: liveCalls > 0 ? 'stopping' : 'stop' };
}

/** The campaigncall result a finished call gives (VoIPbin: only a normal hangup after answer succeeds). */
export function resultOfHangup(reason: HangupReason): Exclude<CampaigncallResult, ''> {
  return reason === 'normal' ? 'success' : 'fail';
}

export interface TargetTries {
  destinations: unknown[]; // null where a slot is empty
  tryCounts: number[];
}

/**
 * The destination a target is dialled at next: the first present one whose try count is below the
 * outplan's max for its index; null when every try is used.
 */
export function nextDestination(t: TargetTries, maxTryCounts: number[]): { index: number; tryCount: number } | null {
  for (let i = 0; i < DESTINATIONS; i++) {
    if (t.destinations[i] == null) continue;
    if ((t.tryCounts[i] ?? 0) >= (maxTryCounts[i] ?? 0)) continue;
    return { index: i, tryCount: (t.tryCounts[i] ?? 0) + 1 };
  }
  return null;
}
