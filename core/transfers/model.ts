/**
 * The Transfer resource (spec "Transfer"): blind — the transferer's peer is connected to the target
 * and the transferer released; attended — the transferer talks to the target first, and the peer is
 * connected to the target when the transferer hangs up. `status` is ours (not in the spec's list):
 * initiating → (consulting) → done | failed.
 */
export const TRANSFER_TYPES = ['attended', 'blind'] as const;
export type TransferType = (typeof TRANSFER_TYPES)[number];
export type TransferStatus = 'initiating' | 'consulting' | 'done' | 'failed';
/** Where the request came from: the API or a phone's REFER. */
export type TransferSource = 'api' | 'refer';

/**
 * Why a transfer failed (a closed list; docs/transfers.md). It reaches the `transfer_failed` event's
 * `fail_reason`, the flows of the calls involved (`svc.transfer.fail_reason`) and, for a REFER, the
 * final NOTIFY's sipfrag status (TRANSFER_FAIL_SIP).
 */
export const TRANSFER_FAIL_REASONS = [
  'transferer_gone',
  'not_bridged',
  'target_busy',
  'target_no_answer',
  'target_rejected',
  'target_left',
  'transferee_gone',
  'both_parties_gone',
  'replaces_not_found',
  'internal_error',
] as const;
export type TransferFailReason = (typeof TRANSFER_FAIL_REASONS)[number];

/** The sipfrag status line a REFER's final NOTIFY carries for each failure. */
export const TRANSFER_FAIL_SIP: Record<TransferFailReason, readonly [number, string]> = {
  transferer_gone: [481, 'Call/Transaction Does Not Exist'],
  not_bridged: [488, 'Not Acceptable Here'],
  target_busy: [486, 'Busy Here'],
  target_no_answer: [480, 'Temporarily Unavailable'],
  target_rejected: [603, 'Decline'],
  target_left: [487, 'Request Terminated'],
  transferee_gone: [487, 'Request Terminated'],
  both_parties_gone: [487, 'Request Terminated'],
  replaces_not_found: [481, 'Call/Transaction Does Not Exist'],
  internal_error: [500, 'Server Internal Error'],
};
