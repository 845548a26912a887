/**
 * Speech commands control-api sends to media-app (core/commands/contracts.ts SubsystemCommands).
 * Live-session commands go to the node that owns the call (`callId`) or hosts the conference
 * (speakings on a confbridge); a recording's transcription goes to the shared queue any node takes. Every handler is idempotent: a say carries its number
 * (`seq`), so a redelivered or reordered say is spoken once and in order.
 */
export interface SpeechCommands {
  'speaking.start': { speakingId: string; referenceType: 'call' | 'confbridge'; referenceId: string };
  'speaking.say': { speakingId: string; seq: number; text: string };
  'speaking.stop': { speakingId: string };
  /** drop every say numbered up to `upTo` (spoken, speaking or queued); the session stays open */
  'speaking.flush': { speakingId: string; upTo: number };
  /** callId: the call, or the conference of a confbridge transcribe */
  'transcribe.start': { transcribeId: string; callId: string; phrases?: string[] };
  'transcribe.stop': { transcribeId: string; callId: string };
  'transcribe.recording': { transcribeId: string };
}

declare module '../commands/contracts' {
  interface SubsystemCommands extends SpeechCommands {}
}
