/**
 * Commands of the groupcall and transfer subsystems (control-api → media-app, BullMQ; at least once).
 * groupcall.start goes to the shared originate queue (any node may ring the group); the others go to
 * the node that owns the calls involved.
 */
declare module '../commands/contracts' {
  interface SubsystemCommands {
    'groupcall.start': { groupcallId: string; customerId: string };
    'groupcall.hangup': { groupcallId: string };
    'transfer.start': { transferId: string; callId: string };
  }
}

/** Redis key (under the prefix) of the node ringing a groupcall: set once, so a redelivery rings nothing twice. */
export const groupcallClaimKey = (id: string): string => `groupcall-claim:${id}`;

export {};
