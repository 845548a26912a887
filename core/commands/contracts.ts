/**
 * Where commands from control-api to media-app go (BullMQ; the commands themselves are
 * core/commands/protocol.ts). Originate goes to one shared queue that every
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

export { commandCallId } from './protocol';
export type { CommandEnvelope, MuteDirection, RecordingOptions } from './protocol';
/** Every command media-app takes: the closed union of core/commands/protocol.ts. */
export type { Command as MediaCommand } from './protocol';
