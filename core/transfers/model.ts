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
