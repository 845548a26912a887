/**
 * SIP capture: every SIP message the stack sends or receives on a call's dialog (INVITE, ACK, BYE,
 * CANCEL, PRACK, UPDATE, INFO, REFER, NOTIFY and their responses; not REGISTER, OPTIONS, SUBSCRIBE,
 * PUBLISH, MESSAGE) is kept with its direction, time, addresses, transport and raw bytes, keyed by
 * its Call-ID (core/sip/capture-store.ts), digest credentials and SRTP keys blanked before it is
 * written (core/sip/capture-redact.ts). The hot path only appends a small record to an array;
 * a timer writes the batch to Redis with one script call per 500 messages, packed in one argument
 * (core/sip/capture-store.ts: XADD with MAXLEN, EXPIRE). Pending records are
 * bounded: when the store falls behind, new ones are dropped and counted, never queued without end.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { SipMessage, SourceInfo, TransportName } from '../message';
import { CAPTURE_WRITE_SCRIPT, captureKey, packCaptured, type CaptureRecord, type CaptureSettings } from '../../core/sip/capture-store';
import { redactSipBytes } from '../../core/sip/capture-redact';

/** What SipStack calls for each message it sends or receives (parsed). */
export interface SipCaptureHook {
  received(msg: SipMessage, data: Buffer, src: SourceInfo): void;
  sent(msg: SipMessage, data: Buffer, dest: { transport: TransportName; address: string; port: number }, local: { address: string; port: number }): void;
}

interface Pending extends CaptureRecord {
  callId: string;
}

const SKIPPED = new Set(['REGISTER', 'OPTIONS', 'SUBSCRIBE', 'PUBLISH', 'MESSAGE']);
const FLUSH_MS = 50;
const MAX_PENDING = 20_000;
/** messages per EVAL: one call keeps Redis busy for well under a millisecond */
const CHUNK = 500;

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

export interface CaptureStats {
  captured: number;
  written: number;
  dropped: number;
  writeErrors: number;
}

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
    this.timer ??= setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, FLUSH_MS);
  }

  /** Writes what is pending (waits for a write under way first). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (!this.pending.length) return;
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.write(batch).finally(() => {
      this.flushing = null;
    });
    await this.flushing;
  }

  private async write(batch: Pending[]): Promise<void> {
    for (let i = 0; i < batch.length; i += CHUNK) await this.writeChunk(batch.slice(i, i + CHUNK));
  }

  /** One EVAL for the chunk: a command per message cost ~10 µs of this process's CPU each (ioredis
   * builds, queues and answers every command of a pipeline one by one), and so does each argument. */
  private async writeChunk(chunk: Pending[]): Promise<void> {
    const keys = new Array<string>(chunk.length);
    for (let i = 0; i < chunk.length; i++) {
      keys[i] = captureKey(this.prefix, chunk[i]!.callId);
      // blanked here, off the packet's path, before anything is stored
      chunk[i]!.raw = redactSipBytes(chunk[i]!.raw);
    }
    try {
      const failed = Number(await this.redis.eval(CAPTURE_WRITE_SCRIPT, keys.length, ...keys, this.settings.maxPerCall, this.settings.retentionSeconds, packCaptured(chunk)));
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
