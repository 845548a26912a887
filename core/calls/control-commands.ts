/**
 * Commands on a live call's media that control-api sends to the node owning the call
 * (core/commands/contracts.ts SubsystemCommands; media-app/call/controls.ts handles them). Each one
 * states the wanted end state (`on`), so a redelivered command changes nothing.
 */
export interface CallControlCommands {
  /** Hold by re-INVITE (RFC 3264 §8.4): the party gets a=sendonly (music on hold playing) or a=inactive. */
  'call.hold': { callId: string; on: boolean };
  /** Music on hold played to the party, in a loop, until turned off. */
  'call.moh': { callId: string; on: boolean };
  /** One-way silence: the party hears nothing; its audio is still received, bridged and recorded. */
  'call.silence': { callId: string; on: boolean };
  /** Text spoken into the call by the platform's TTS (after what is already playing). */
  'call.talk': { callId: string; text: string; language: string; provider: string; voiceId: string };
}

declare module '../commands/contracts' {
  interface SubsystemCommands extends CallControlCommands {}
}
