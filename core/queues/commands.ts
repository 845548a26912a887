/** Queue commands control-api → the media-app node that owns the caller's call. */
declare module '../commands/contracts' {
  interface SubsystemCommands {
    /** Takes the caller out of the queue; its flow goes on with the next action (or ends if in service). */
    'queuecall.kick': { callId: string; queuecallId: string };
  }
}
export {};
