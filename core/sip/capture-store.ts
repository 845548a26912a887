/**
 * The SIP capture store shared by its writer (sip-server/capture/) and its readers (the timeline
 * routes): one Redis stream per SIP Call-ID, `<prefix>sipcap:<Call-ID>`, each entry one SIP message
 * as sent or received on the wire. Streams are trimmed to a bound per Call-ID (XADD MAXLEN) and
 * expire after the retention (EXPIRE, renewed by every message), so the store is bounded in size
 * and time without a sweeper.
 */
import type { Redis } from 'ioredis';
import { redactSipText } from './capture-redact';

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

/** A message to write: what the stream entry holds, the raw bytes as sent or received. */
export type CaptureRecord = Omit<CapturedMessage, 'raw' | 'sipCallId'> & { raw: Buffer };

/**
 * Messages for CAPTURE_WRITE_SCRIPT in one argument: per message a header line
 * `<us> <direction> <transport> <srcIp>|<srcPort> <dstIp>|<dstPort> <byte count>\n`, then its raw bytes.
 * One argument for the batch instead of six a message: the Redis client's cost is per argument
 * (at 300 calls/s the six cost sip-server ~4 % of its CPU).
 */
export function packCaptured(list: readonly CaptureRecord[]): Buffer {
  const heads: string[] = new Array(list.length);
  let total = 0;
  for (let i = 0; i < list.length; i++) {
    const m = list[i]!;
    const h = `${m.us} ${m.direction} ${m.transport} ${m.srcIp}|${m.srcPort} ${m.dstIp}|${m.dstPort} ${m.raw.length}\n`;
    heads[i] = h;
    total += Buffer.byteLength(h) + m.raw.length;
  }
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (let i = 0; i < list.length; i++) {
    at += out.write(heads[i]!, at);
    at += list[i]!.raw.copy(out, at);
  }
  return out;
}

/**
 * KEYS: one stream key per message, in order; ARGV: max entries per stream, TTL seconds, the
 * packCaptured batch. Each message is its own XADD (redis.pcall: a stream that fails, e.g. a key of
 * another type, fails only its message); every stream gets the TTL once. Returns how many failed.
 * The entry's fields are the ones decode() below reads.
 */
export const CAPTURE_WRITE_SCRIPT = `
local maxlen, ttl, blob = ARGV[1], ARGV[2], ARGV[3]
local pos, failed, expired = 1, 0, {}
for i = 1, #KEYS do
  local t, d, p, s, r, n, at = string.match(blob, '^(%d+) (%S+) (%S+) (%S+) (%S+) (%d+)\\n()', pos)
  if not at then return redis.error_reply('capture batch: message ' .. i .. ' is malformed') end
  pos = at + tonumber(n)
  local res = redis.pcall('XADD', KEYS[i], 'MAXLEN', maxlen, '*', 't', t, 'd', d, 'p', p, 's', s, 'r', r, 'm', string.sub(blob, at, pos - 1))
  if type(res) == 'table' and res.err then failed = failed + 1
  elseif not expired[KEYS[i]] then expired[KEYS[i]] = true; redis.call('EXPIRE', KEYS[i], ttl) end
end
return failed
`;

function decode(sipCallId: string, fields: string[]): CapturedMessage | null {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
  const [srcIp, srcPort] = (f.s ?? '').split('|');
  const [dstIp, dstPort] = (f.r ?? '').split('|');
  if (!f.t || !f.m || (f.d !== 'in' && f.d !== 'out')) return null;
  return {
    us: Number(f.t),
    direction: f.d,
    transport: (f.p ?? 'udp') as CaptureTransport,
    // blanked again on the way out: entries written before capture-time redaction are still kept
    srcIp: srcIp ?? '',
    srcPort: Number(srcPort) || 0,
    dstIp: dstIp ?? '',
    dstPort: Number(dstPort) || 0,
    sipCallId,
    raw: redactSipText(f.m),
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
