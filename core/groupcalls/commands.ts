/**
 * The groupcall subsystem's shared keys. Its commands (groupcall.start, groupcall.hangup,
 * transfer.start) are declared in core/commands/protocol.ts: groupcall.start goes to the shared
 * originate queue (any node may ring the group); the others go to the node that owns the calls involved.
 */

/** Redis key (under the prefix) of the node ringing a groupcall: set once, so a redelivery rings nothing twice. */
export const groupcallClaimKey = (id: string): string => `groupcall-claim:${id}`;
