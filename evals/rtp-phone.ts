/**
 * A simulated caller's RTP side: its own UDP socket, PCMU at 8 kHz in 20 ms packets on a clock of its
 * own (what a phone sends whether or not anyone talks: silence between utterances), the caller's speech
 * mixed in with say(), digits as RFC 4733 telephone-events (payload type 101) with dtmf(). What the
 * platform sends is timed on arrival with its level (the agent's audio as the caller heard it).
 * The pacing timer (and its turn after the loop's I/O) is armed by start() and cleared by close(); a say() or dtmf() not finished when
 * the phone closes resolves then.
 */
import dgram from 'node:dgram';
import { encodeG711, G711_TABLES, PT_PCMU } from '../core/audio/g711';

const FRAME = 160;
const PT_EVENT = 101;
/** a digit's tone, its gap before the next, and the end packet's repeats (RFC 4733 section 2.5.1.4) */
const DIGIT_MS = 100;
const DIGIT_GAP_MS = 60;
const END_REPEATS = 3;
const EVENT_CODE: Record<string, number> = { '*': 10, '#': 11, A: 12, B: 13, C: 14, D: 15 };

/** A packet of the platform's audio: when it arrived (performance.now()) and its samples, µ-law decoded; its RTP timestamp and SSRC. */
export interface HeardAudio {
  at: number;
  pcm: Int16Array;
  ts: number;
  ssrc: number;
}

/** A 20 ms slot the phone sent: when it was due (performance.now()), its audio (speech and background) or the digit's event code. */
export type SentAudio = { due: number; pcm: Int16Array } | { due: number; digit: number };

interface Job {
  kind: 'speech' | 'digit';
  samples: Int16Array;
  offset: number;
  /** a digit's event code and how many packets of it have gone */
  code: number;
  sent: number;
  done: () => void;
  startedAt: number | null;
}

export const SDP_PAYLOADS = `${PT_PCMU} ${PT_EVENT}`;

export class RtpPhone {
  private readonly sock = dgram.createSocket('udp4');
  port = 0;
  private remote: { host: string; port: number } | null = null;
  private clock: NodeJS.Timeout | null = null;
  /** the clock's turn, run after the loop's I/O (start); at most one pending */
  private due: NodeJS.Immediate | null = null;
  private nextDue = 0;
  private seq = Math.floor(Math.random() * 0xffff);
  private ts = Math.floor(Math.random() * 0x7fffffff);
  private readonly ssrc = Math.floor(Math.random() * 0xffffffff) >>> 0;
  private readonly queue: Job[] = [];
  private closed = false;
  /** the platform's packets: arrival (performance.now()) and mean absolute level of the PCMU payload */
  readonly heard: { at: number; level: number }[] = [];
  /** called on every packet heard with its decoded samples (a talk-over turn waiting for the agent's voice, the hearing, an echo) */
  private readonly listeners = new Set<(p: HeardAudio) => void>();
  /** called on every 20 ms slot sent (the call's audio kept, call-audio.ts) */
  private readonly sentListeners = new Set<(s: SentAudio) => void>();
  /** adds the caller's background into each 20 ms frame it sends, in place (background.ts) */
  private mix: ((frame: Int16Array, due: number) => void) | null = null;

  private constructor(private readonly host: string) {}

  static async open(host: string): Promise<RtpPhone> {
    const p = new RtpPhone(host);
    p.sock.on('error', () => p.close());
    await new Promise<void>((resolve, reject) => {
      p.sock.once('error', reject);
      p.sock.bind(0, host, () => {
        p.sock.off('error', reject);
        resolve();
      });
    });
    p.port = p.sock.address().port;
    p.sock.on('message', (buf) => p.onPacket(buf));
    return p;
  }

  /** The SDP offer of this phone (PCMU and telephone-events). */
  sdp(): string {
    const id = Date.now();
    return [
      'v=0',
      `o=evals ${id} ${id} IN IP4 ${this.host}`,
      's=openvoice evals',
      `c=IN IP4 ${this.host}`,
      't=0 0',
      `m=audio ${this.port} RTP/AVP ${SDP_PAYLOADS}`,
      `a=rtpmap:${PT_PCMU} PCMU/8000`,
      `a=rtpmap:${PT_EVENT} telephone-event/8000`,
      `a=fmtp:${PT_EVENT} 0-15`,
      'a=ptime:20',
      'a=sendrecv',
      '',
    ].join('\r\n');
  }

  /** Starts sending to the platform's audio address (silence until a say or dtmf). */
  start(remote: { host: string; port: number }): void {
    if (this.closed || this.clock) return;
    this.remote = remote;
    this.nextDue = performance.now();
    // the frames due go after the loop's I/O: after a stall, the packets that came meanwhile are read
    // first, so a frame that echoes them (a speakerphone's) has them, as a phone's loudspeaker played them
    this.clock = setInterval(() => (this.due ??= setImmediate(this.runDue)), 10);
  }

  /** Mixes `fn`'s audio into every frame sent from now on (speech, silence; not the digits' events), told when the frame was due. */
  setBackground(fn: (frame: Int16Array, due: number) => void): void {
    this.mix = fn;
  }

  /** Says `samples` (8 kHz) after whatever is queued; resolves with when its first packet went out, once all of it has. */
  say(samples: Int16Array): Promise<number | null> {
    return this.enqueue({ kind: 'speech', samples, code: 0 });
  }

  /** Presses `digits` one after another; resolves after the gap that follows the last one, with when its end packets went out (performance.now()), null if none did. */
  async dtmf(digits: string): Promise<number | null> {
    let end: number | null = null;
    for (const d of digits) {
      const started = await this.enqueue({ kind: 'digit', samples: new Int16Array(0), code: EVENT_CODE[d] ?? Number(d) });
      end = started === null ? null : performance.now();
      await this.enqueue({ kind: 'speech', samples: new Int16Array(DIGIT_GAP_MS * 8), code: 0 });
    }
    return end;
  }

  private enqueue(j: Pick<Job, 'kind' | 'samples' | 'code'>): Promise<number | null> {
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      const job: Job = { ...j, offset: 0, sent: 0, startedAt: null, done: () => resolve(job.startedAt) };
      this.queue.push(job);
    });
  }

  private readonly runDue = (): void => {
    this.due = null;
    this.tick();
  };

  /** Sends every packet that is due (a late timer catches up, so the stream keeps its 20 ms cadence). */
  private tick(): void {
    const now = performance.now();
    while (this.nextDue <= now && !this.closed) {
      this.sendFrame(now);
      this.nextDue += 20;
    }
  }

  private sendFrame(now: number): void {
    const job = this.queue[0];
    if (job?.kind === 'digit') return this.sendDigit(job, now);
    const pcm = new Int16Array(FRAME);
    if (job) {
      job.startedAt ??= now;
      const n = Math.min(FRAME, job.samples.length - job.offset);
      pcm.set(job.samples.subarray(job.offset, job.offset + n));
      job.offset += n;
      if (job.offset >= job.samples.length) this.next();
    }
    this.mix?.(pcm, this.nextDue);
    for (const l of this.sentListeners) l({ due: this.nextDue, pcm });
    this.packet(PT_PCMU, false, this.ts, Buffer.from(encodeG711('PCMU', pcm)));
    this.ts = (this.ts + FRAME) >>> 0;
  }

  /** One packet of an RFC 4733 event: the same timestamp throughout, the duration growing, the end bit on the last three. */
  private sendDigit(job: Job, now: number): void {
    job.startedAt ??= now;
    for (const l of this.sentListeners) l({ due: this.nextDue, digit: job.code });
    const tonePackets = DIGIT_MS / 20;
    const end = job.sent >= tonePackets - 1;
    const duration = Math.min(job.sent + 1, tonePackets) * FRAME;
    const payload = Buffer.from([job.code, (end ? 0x80 : 0) | 10, duration >> 8, duration & 0xff]);
    const repeats = end ? END_REPEATS : 1;
    for (let i = 0; i < repeats; i++) this.packet(PT_EVENT, job.sent === 0, this.ts, payload);
    job.sent++;
    if (end) {
      this.ts = (this.ts + duration) >>> 0;
      this.next();
    }
  }

  private next(): void {
    this.queue.shift()?.done();
  }

  private packet(pt: number, marker: boolean, ts: number, payload: Buffer): void {
    if (!this.remote) return;
    const h = Buffer.alloc(12);
    h[0] = 0x80;
    h[1] = (marker ? 0x80 : 0) | pt;
    h.writeUInt16BE(this.seq, 2);
    this.seq = (this.seq + 1) & 0xffff;
    h.writeUInt32BE(ts >>> 0, 4);
    h.writeUInt32BE(this.ssrc, 8);
    this.sock.send(Buffer.concat([h, payload]), this.remote.port, this.remote.host);
  }

  private onPacket(buf: Buffer): void {
    if (buf.length < 12 || (buf[0]! & 0xc0) !== 0x80 || (buf[1]! & 0x7f) !== PT_PCMU) return;
    const payload = buf.subarray(12 + (buf[0]! & 0x0f) * 4);
    const pcm = new Int16Array(payload.length);
    let sum = 0;
    for (let i = 0; i < payload.length; i++) sum += Math.abs((pcm[i] = G711_TABLES.muDecode[payload[i]!]!));
    const at = performance.now();
    this.heard.push({ at, level: payload.length ? sum / payload.length : 0 });
    for (const l of [...this.listeners]) l({ at, pcm, ts: buf.readUInt32BE(4), ssrc: buf.readUInt32BE(8) });
  }

  /** Calls `fn` on every 20 ms slot sent from now on, until the returned function is called (or the phone closes). */
  onSent(fn: (s: SentAudio) => void): () => void {
    this.sentListeners.add(fn);
    return () => this.sentListeners.delete(fn);
  }

  /** Calls `fn` on every packet heard from now on, until the returned function is called (or the phone closes). */
  onHeard(fn: (p: HeardAudio) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.clock) clearInterval(this.clock);
    this.clock = null;
    if (this.due) clearImmediate(this.due);
    this.due = null;
    this.listeners.clear();
    this.sentListeners.clear();
    for (const j of this.queue.splice(0)) j.done();
    try {
      this.sock.close();
    } catch {
      // a socket whose bind failed is closed already
    }
  }
}
