/**
 * Commands from control-api to media-app (BullMQ). Originate goes to one shared queue that every
 * media-app node consumes; a command for a live call goes to the queue of the node that owns the call,
 * found in Redis under callNodeKey. BullMQ delivers at least once: every handler must be idempotent,
 * and `commandId` doubles as the BullMQ jobId so a retried enqueue is not queued twice.
 */
export const ORIGINATE_QUEUE = 'media-app-originate';
export const nodeQueueName = (nodeId: string): string => `media-app-node-${nodeId}`;
/** Redis key (under the configured prefix) holding the id of the media-app node that owns a call. */
export const callNodeKey = (callId: string): string => `call-node:${callId}`;
/** Redis key holding a node's heartbeat; a node whose key expired owns nothing any more. */
export const nodeAliveKey = (nodeId: string): string => `node-alive:${nodeId}`;

export type MuteDirection = 'in' | 'out' | 'both';

export type MediaCommand =
  | { type: 'call.originate'; callIds: string[]; customerId: string }
  | { type: 'call.hangup'; callId: string }
  | { type: 'call.mute'; callId: string; direction: MuteDirection; on: boolean }
  | { type: 'call.recording_start'; callId: string; recordingId: string; options: RecordingOptions }
  | { type: 'call.recording_stop'; callId: string }
  /** Run an activeflow control-api already wrote (POST /activeflows); skipped unless still running. */
  | { type: 'activeflow.start'; activeflowId: string; customerId: string }
  | { type: 'activeflow.stop'; activeflowId: string }
  | { type: 'activeflow.continue'; activeflowId: string; actionId: string }
  | SubsystemCommand;

/**
 * Commands of later subsystems (conferences, queues, media streams...), declared from their own
 * modules so none edits this file:
 *
 *   declare module '../commands/contracts' {
 *     interface SubsystemCommands { 'conference.kick': { conferenceId: string; callId: string } }
 *   }
 *
 * media-app routes them to the handler the subsystem registered (media-app/subsystem.ts).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- empty on purpose: each subsystem's module adds its commands by augmentation
export interface SubsystemCommands {}
export type SubsystemCommand = { [K in keyof SubsystemCommands]: { type: K } & SubsystemCommands[K] }[keyof SubsystemCommands];

export interface RecordingOptions {
  format: 'wav';
  end_of_silence: number;
  end_of_key: string;
  duration: number;
  on_end_flow_id: string;
}

export interface CommandEnvelope {
  commandId: string;
  issuedAt: string;
  command: MediaCommand;
  /** W3C trace context of the sender (`traceparent`, core/tracing); absent when tracing is off. */
  trace?: Record<string, string>;
}

/** The call a command is about, when it is about one live call (its node is then the owner). */
export function commandCallId(c: MediaCommand): string | null {
  return 'callId' in c ? c.callId : null;
}
