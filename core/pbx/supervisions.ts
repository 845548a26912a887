/**
 * Supervisions (docs/pbx.md "Supervisor"): a manager listening to, whispering to or barging into a
 * live call (Asterisk ChanSpy's spy, whisper and barge). One per supervised call, kept in Redis
 * (`supervision:<call id>`) so control-api sees it whichever node carries it out: the API claims it
 * (SET NX) before its command, the node that owns the call keeps it current and deletes it at the end.
 */
import type { Redis } from 'ioredis';

/** listen: the supervisor hears both sides, nobody hears it; whisper: the supervised party hears it too; barge: everyone does. */
export const SUPERVISE_MODES = ['listen', 'whisper', 'barge'] as const;
export type SuperviseMode = (typeof SUPERVISE_MODES)[number];

/** ChanSpy's DTMF keys (its `d` option, FreePBX's): the supervisor switches mode with 4, 5, 6. */
export const MODE_KEYS: Readonly<Record<string, SuperviseMode>> = { '4': 'listen', '5': 'whisper', '6': 'barge' };

/** A supervision as stored and as the API and its events show it. */
export interface Supervision {
  readonly id: string;
  readonly customer_id: string;
  /** The supervised call: its party is the one a whisper reaches (the agent). */
  readonly call_id: string;
  /** The supervisor's own call (null while it rings). */
  readonly supervisor_call_id: string | null;
  readonly mode: SuperviseMode;
  /** ringing: the supervisor is being rung (API); active: it is in the call. */
  readonly status: 'ringing' | 'active';
  /** The node carrying it out (the supervised call's). */
  readonly node_id: string;
  /** RFC 3339. */
  readonly tm_create: string;
}

const key = (prefix: string, callId: string) => `${prefix}supervision:${callId}`;
/** Kept a day at most: a node that dies leaves a record its call's end would have deleted. */
const TTL_SEC = 86_400;

export function supervisions(redis: Redis, prefix: string) {
  return {
    async get(callId: string): Promise<Supervision | null> {
      const v = await redis.get(key(prefix, callId));
      return v ? (JSON.parse(v) as Supervision) : null;
    },
    /** Stores `s` unless the call is supervised already; false then. */
    async claim(s: Supervision): Promise<boolean> {
      return (await redis.set(key(prefix, s.call_id), JSON.stringify(s), 'EX', TTL_SEC, 'NX')) === 'OK';
    },
    async put(s: Supervision): Promise<void> {
      await redis.set(key(prefix, s.call_id), JSON.stringify(s), 'EX', TTL_SEC);
    },
    /** Deletes the call's supervision when it is still `id`. */
    async release(callId: string, id: string): Promise<void> {
      const cur = await this.get(callId);
      if (cur?.id === id) await redis.del(key(prefix, callId));
    },
  };
}
