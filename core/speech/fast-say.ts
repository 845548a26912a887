/**
 * The fast path of a say: besides its BullMQ command (at least once, the reliable path), control-api
 * publishes the say on the owning node's Redis channel, which reaches the node a queue hop sooner.
 * Whichever copy arrives first is spoken; the session ignores the other by its number (seq), so
 * a lost publish (node resubscribing) costs only the time the queue takes.
 */
import type { Redis } from 'ioredis';

export interface FastSay {
  speakingId: string;
  seq: number;
  text: string;
}

export const fastSayChannel = (keyPrefix: string, nodeId: string): string => `${keyPrefix}speech-say:${nodeId}`;

/** Publishes a say to its node; never throws (the queued command still carries it). */
export async function publishFastSay(redis: Redis, keyPrefix: string, nodeId: string, say: FastSay): Promise<void> {
  await redis.publish(fastSayChannel(keyPrefix, nodeId), JSON.stringify(say)).catch(() => undefined);
}

/** Parses a message of the channel; null when it is not a say. */
export function parseFastSay(message: string): FastSay | null {
  try {
    const m = JSON.parse(message) as Partial<FastSay>;
    if (typeof m.speakingId !== 'string' || typeof m.text !== 'string' || !Number.isInteger(m.seq) || (m.seq as number) < 1) return null;
    return { speakingId: m.speakingId, seq: m.seq as number, text: m.text };
  } catch {
    return null;
  }
}
