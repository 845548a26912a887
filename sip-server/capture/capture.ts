/**
 * SIP capture: every SIP message the stack sends or receives on a call's dialog (INVITE, ACK, BYE,
 * CANCEL, PRACK, UPDATE, INFO, REFER, NOTIFY and their responses; not REGISTER, OPTIONS, SUBSCRIBE,
 * PUBLISH, MESSAGE) is kept with its direction, time, addresses, transport and raw bytes, keyed by
 * its Call-ID (core/sip/capture-store.ts). The hot path only appends a small record to an array;
 * a timer writes the batch to Redis with one script call per 500 messages (XADD with MAXLEN, EXPIRE). Pending records are
 * bounded: when the store falls behind, new ones are dropped and counted, never queued without end.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { SipMessage, SourceInfo, TransportName } from '../message';
import { captureKey, encodeCaptured, type CaptureSettings } from '../../core/sip/capture-store';

/** What SipStack calls for each message it sends or receives (parsed). */
export interface SipCaptureHook {
  received(msg: SipMessage, data: Buffer, src: SourceInfo): void;
  sent(msg: SipMessage, data: Buffer, dest: { transport: TransportName; address: string; port: number }, local: { address: string; port: number }): void;
}

interface Pending {
  us: number;
  callId: string;
  direction: 'in' | 'out';
  transport: TransportName;
  srcIp: string;
  srcPort: number;
  dstIp: string;
  dstPort: number;
  raw: Buffer;
}

const SKIPPED = new Set(['REGISTER', 'OPTIONS', 'SUBSCRIBE', 'PUBLISH', 'MESSAGE']);
const FLUSH_MS = 50;
const MAX_PENDING = 20_000;
/** messages per EVAL: one call keeps Redis busy for well under a millisecond */
const CHUNK = 500;

/**
 * KEYS: each message's stream; ARGV: MAXLEN, TTL, the field names (JSON), then per message the
 * values of those fields (encodeCaptured's names and values, in its order). Each message is added on its own (redis.pcall: a stream that fails,
 * e.g. a key of another type, fails only its messages); every stream gets the TTL once. Returns
 * the number of messages that failed.
 */
const WRITE_SCRIPT = `
local maxlen, ttl, names = ARGV[1], ARGV[2], cjson.decode(ARGV[3])
local a, nf, failed, expired = 4, #names, 0, {}
local xadd = {'MAXLEN', maxlen, '*'}
for i = 1, #KEYS do
  for f = 1, nf do xadd[2 + 2 * f] = names[f]; xadd[3 + 2 * f] = ARGV[a + f - 1] end
  local r = redis.pcall('XADD', KEYS[i], unpack(xadd))
  if type(r) == 'table' and r.err then failed = failed + 1
  elseif not expired[KEYS[i]] then expired[KEYS[i]] = true; redis.call('EXPIRE', KEYS[i], ttl) end
  a = a + nf
end
return failed
`;

/** The method a message belongs to: a request's own, a response's CSeq method. */
function methodOf(msg: SipMessage): string {
  const m = (msg as { method?: string }).method;
  if (m) return m;
  const cseq = msg.headers.get('CSeq') ?? '';
  return cseq.slice(cseq.lastIndexOf(' ') + 1).trim();
}

/** Microseconds since the epoch, monotonic within the process (ordering within one millisecond). */
const TIME_ORIGIN = performance.timeOrigin; // a getter that allocates: read once
const nowUs = (): number => Math.round((TIME_ORIGIN + performance.now()) * 1000);

export interface CaptureStats { captured: number; written: number; dropped: number; writeErrors: number }

export class SipCapture implements SipCaptureHook {
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  readonly stats: CaptureStats = { captured: 0, written: 0, dropped: 0, writeErrors: 0 };

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly settings: CaptureSettings,
    private readonly log?: Logger,
  ) {}

  received(msg: SipMessage, data: Buffer, src: SourceInfo): void {
    this.add(msg, data, 'in', src.transport, src.address, src.port, src.localAddress, src.localPort);
  }

  sent(msg: SipMessage, data: Buffer, dest: { transport: TransportName; address: string; port: number }, local: { address: string; port: number }): void {
    this.add(msg, data, 'out', dest.transport, local.address, local.port, dest.address, dest.port);
  }

  private add(msg: SipMessage, data: Buffer, direction: 'in' | 'out', transport: TransportName, srcIp: string, srcPort: number, dstIp: string, dstPort: number): void {
    if (!this.settings.enabled) return;
    const callId = msg.callId;
    if (!callId || SKIPPED.has(methodOf(msg))) return;
    if (this.pending.length >= MAX_PENDING) {
      this.stats.dropped++;
      return;
    }
    this.stats.captured++;
    this.pending.push({ us: nowUs(), callId, direction, transport, srcIp, srcPort, dstIp, dstPort, raw: data });
    this.timer ??= setTimeout(() => { this.timer = null; void this.flush(); }, FLUSH_MS);
  }

  /** Writes what is pending (waits for a write under way first). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (!this.pending.length) return;
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.write(batch).finally(() => { this.flushing = null; });
    await this.flushing;
  }

  private async write(batch: Pending[]): Promise<void> {
    for (let i = 0; i < batch.length; i += CHUNK) await this.writeChunk(batch.slice(i, i + CHUNK));
  }

  /** One EVAL for the chunk: a command per message cost ~10 µs of this process's CPU each (ioredis
   * builds, queues and answers every command of a pipeline one by one). */
  private async writeChunk(chunk: Pending[]): Promise<void> {
    const keys: string[] = [];
    const args: (string | number | Buffer)[] = [this.settings.maxPerCall, this.settings.retentionSeconds, ''];
    let names: string[] | undefined;
    for (const p of chunk) {
      keys.push(captureKey(this.prefix, p.callId));
      const fields = encodeCaptured({
        us: p.us, direction: p.direction, transport: p.transport, srcIp: p.srcIp, srcPort: p.srcPort, dstIp: p.dstIp, dstPort: p.dstPort, raw: p.raw,
      });
      names ??= fields.filter((_, i) => i % 2 === 0).map(String);
      for (let i = 1; i < fields.length; i += 2) args.push(fields[i]!);
    }
    args[2] = JSON.stringify(names ?? []);
    try {
      const failed = Number(await this.redis.eval(WRITE_SCRIPT, keys.length, ...keys, ...args));
      this.stats.written += chunk.length - failed;
      if (failed) this.stats.writeErrors += failed;
    } catch (err) {
      this.stats.writeErrors += chunk.length;
      this.log?.warn({ err: (err as Error).message, messages: chunk.length }, 'SIP capture write failed');
    }
  }

  /** Writes what is pending and stops the timer. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
  }
}
