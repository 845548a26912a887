/**
 * The SIP capture store shared by its writer (sip-server/capture/) and its readers (the timeline
 * routes): one Redis stream per SIP Call-ID, `<prefix>sipcap:<Call-ID>`, each entry one SIP message
 * as sent or received on the wire. Streams are trimmed to a bound per Call-ID (XADD MAXLEN) and
 * expire after the retention (EXPIRE, renewed by every message), so the store is bounded in size
 * and time without a sweeper.
 */
import type { Redis } from 'ioredis';

export type CaptureTransport = 'udp' | 'tcp' | 'tls' | 'ws' | 'wss';

export interface CapturedMessage {
  /** Microseconds since the epoch at which the stack sent or received the message. */
  us: number;
  /** 'in': received by the SIP server; 'out': sent by it. */
  direction: 'in' | 'out';
  transport: CaptureTransport;
  srcIp: string;
  srcPort: number;
  dstIp: string;
  dstPort: number;
  sipCallId: string;
  raw: string;
}

export interface CaptureSettings {
  /** Capture on (default) or off. */
  enabled: boolean;
  /** Seconds a Call-ID's messages are kept after its last message. */
  retentionSeconds: number;
  /** Messages kept per Call-ID (the oldest go first). */
  maxPerCall: number;
}

export const DEFAULT_CAPTURE: CaptureSettings = { enabled: true, retentionSeconds: 86_400, maxPerCall: 500 };

/** Settings from SIP_CAPTURE (on|off), SIP_CAPTURE_RETENTION_SECONDS, SIP_CAPTURE_MAX_PER_CALL; throws naming a bad value. */
export function captureSettings(env: NodeJS.ProcessEnv = process.env): CaptureSettings {
  const on = (env.SIP_CAPTURE ?? '').trim().toLowerCase();
  if (on && !['on', 'off', 'true', 'false', '1', '0'].includes(on)) throw new Error('SIP_CAPTURE: must be on or off');
  const int = (name: string, def: number, min: number, max: number): number => {
    const v = env[name];
    if (v === undefined || v === '') return def;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new Error(`${name}: must be an integer from ${min} to ${max}`);
    return Number(v);
  };
  return {
    enabled: on === '' ? DEFAULT_CAPTURE.enabled : ['on', 'true', '1'].includes(on),
    retentionSeconds: int('SIP_CAPTURE_RETENTION_SECONDS', DEFAULT_CAPTURE.retentionSeconds, 60, 30 * 86_400),
    maxPerCall: int('SIP_CAPTURE_MAX_PER_CALL', DEFAULT_CAPTURE.maxPerCall, 10, 100_000),
  };
}

export const captureKey = (prefix: string, sipCallId: string): string => `${prefix}sipcap:${sipCallId}`;

/** The stream entry's field/value list (XADD arguments after the id); the raw message may stay a Buffer. */
export function encodeCaptured(m: Omit<CapturedMessage, 'raw' | 'sipCallId'> & { raw: string | Buffer }): (string | Buffer)[] {
  return ['t', String(m.us), 'd', m.direction, 'p', m.transport, 's', `${m.srcIp}|${m.srcPort}`, 'r', `${m.dstIp}|${m.dstPort}`, 'm', m.raw];
}

function decode(sipCallId: string, fields: string[]): CapturedMessage | null {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
  const [srcIp, srcPort] = (f.s ?? '').split('|');
  const [dstIp, dstPort] = (f.r ?? '').split('|');
  if (!f.t || !f.m || (f.d !== 'in' && f.d !== 'out')) return null;
  return {
    us: Number(f.t), direction: f.d, transport: (f.p ?? 'udp') as CaptureTransport,
    srcIp: srcIp ?? '', srcPort: Number(srcPort) || 0, dstIp: dstIp ?? '', dstPort: Number(dstPort) || 0, sipCallId, raw: f.m,
  };
}

/** Every captured message of these Call-IDs, in the order they were sent or received. */
export async function readCaptured(redis: Redis, prefix: string, sipCallIds: string[]): Promise<CapturedMessage[]> {
  const ids = [...new Set(sipCallIds.filter(Boolean))];
  if (!ids.length) return [];
  const pipe = redis.pipeline();
  for (const id of ids) pipe.xrange(captureKey(prefix, id), '-', '+');
  const answers = (await pipe.exec()) ?? [];
  const out: CapturedMessage[] = [];
  answers.forEach(([err, entries], i) => {
    if (err || !Array.isArray(entries)) return;
    for (const [, fields] of entries as [string, string[]][]) {
      const m = decode(ids[i]!, fields);
      if (m) out.push(m);
    }
  });
  return out.sort((a, b) => a.us - b.us);
}
