// A speakerphone on loopback for the turn-taking tests and benchmarks: the RTP side of a sipp call
// (sipp does the SIP, this socket is the SDP's audio port). It answers each packet the platform sends
// with one of its own (the platform's 20 ms clock paces it): the platform's audio played back
// `echoDelayMs` late and scaled by `echoGain` (the agent hearing itself, as on a speakerphone), mixed
// with the caller's own speech scheduled with say(). Every received packet is timed like TimedSink's.
import { execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { G711_TABLES } from '../../core/audio/g711';

const ULAW_DECODE = G711_TABLES.muDecode;

function ulawEncode(x: number): number {
  const BIAS = 0x84;
  let s = Math.max(-32635, Math.min(32635, Math.round(x)));
  const sign = s < 0 ? 0x80 : 0;
  if (sign) s = -s;
  s += BIAS;
  let e = 7;
  for (let mask = 0x4000; (s & mask) === 0 && e > 0; mask >>= 1) e--;
  const m = (s >> (e + 3)) & 0x0f;
  return ~(sign | (e << 4) | m) & 0xff;
}

/** espeak-ng speech as 8 kHz linear samples (trimmed to its loud part). */
export function speechSamples(text: string, opts: { speed?: number; pitch?: number } = {}): Int16Array {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'echo-phone-'));
  try {
    const wav = path.join(dir, 's.wav');
    const raw = path.join(dir, 's.raw');
    execFileSync('espeak-ng', ['-v', 'en-us', '-s', String(opts.speed ?? 160), '-p', String(opts.pitch ?? 50), '-w', wav, text]);
    execFileSync('sox', [wav, '-r', '8000', '-c', '1', '-e', 'signed', '-b', '16', '-t', 'raw', raw]);
    const b = fs.readFileSync(raw);
    const x = new Int16Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
    let first = 0;
    let last = x.length;
    while (first < x.length && Math.abs(x[first]!) < 300) first++;
    while (last > first && Math.abs(x[last - 1]!) < 300) last--;
    return x.slice(first, last);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface EchoPhoneOptions {
  /** how late the platform's audio comes back, ms (0: no echo) */
  echoDelayMs?: number;
  /** how loud it comes back (0.5 ≈ -6 dB) */
  echoGain?: number;
}

export class EchoPhone {
  private readonly sock = dgram.createSocket('udp4');
  port = 0;
  readonly packets: { at: number; level: number }[] = [];
  /** the caller's speech: [start sample on the phone's clock, samples], and when it was said (ms, performance.now: its packets' send times less the audio after it in them) */
  private readonly speech: { at: number; x: Int16Array; startedAt: number | null; endedAt: number | null; maxGapMs: number }[] = [];
  private lastPacketAt = 0;
  private echo: Int16Array;
  private clock = 0;
  private seq = 1;
  private ts = 0;
  private readonly ssrc = 0x5eed0001;
  /** per SSRC of the platform: first and highest extended sequence number, packets received */
  private readonly streams = new Map<number, { first: number; last: number; received: number }>();

  private constructor(private readonly o: EchoPhoneOptions) {
    this.echo = new Int16Array(Math.max(160, Math.round((o.echoDelayMs ?? 0) * 8) + 160));
  }

  static async open(o: EchoPhoneOptions = {}): Promise<EchoPhone> {
    const p = new EchoPhone(o);
    await new Promise<void>((r) => p.sock.bind(0, '127.0.0.1', r));
    p.port = p.sock.address().port;
    p.sock.on('message', (buf, from) => p.onPacket(buf, from.address, from.port));
    return p;
  }

  /** Says `x` (8 kHz samples) `inMs` from now (the phone's packet clock); resolves with its start and end times once said. */
  say(x: Int16Array, inMs = 0): { startedAt: () => number | null; endedAt: () => number | null; maxGapMs: () => number } {
    const s = { at: this.clock + Math.round(inMs * 8), x, startedAt: null as number | null, endedAt: null as number | null, maxGapMs: 0 };
    this.speech.push(s);
    return { startedAt: () => s.startedAt, endedAt: () => s.endedAt, maxGapMs: () => s.maxGapMs };
  }

  private onPacket(buf: Buffer, host: string, port: number): void {
    if (buf.length < 12 || (buf[0]! & 0xc0) !== 0x80 || (buf[1]! & 0x7f) !== 0) return;
    const payload = buf.subarray(12 + (buf[0]! & 0x0f) * 4);
    const now = performance.now();
    this.count(buf.readUInt32BE(8), buf.readUInt16BE(2));
    let sum = 0;
    for (const b of payload) sum += Math.abs(ULAW_DECODE[b]!);
    this.packets.push({ at: now, level: payload.length ? sum / payload.length : 0 });
    const n = payload.length;
    const delay = Math.round((this.o.echoDelayMs ?? 0) * 8);
    const gain = this.o.echoGain ?? 0;
    // the echo line: what was received `delay` samples ago comes out now
    const out = new Float64Array(n);
    if (gain > 0 && delay >= 0) {
      const line = this.echo;
      for (let i = 0; i < n; i++) {
        const idx = (this.clock + i) % line.length;
        out[i] = line[idx]! * gain;
        line[(this.clock + i + delay) % line.length] = ULAW_DECODE[payload[i]!]!;
      }
    }
    const gap = this.lastPacketAt ? now - this.lastPacketAt : 0;
    this.lastPacketAt = now;
    for (const s of this.speech) {
      const from = this.clock - s.at;
      if (from + n <= 0 || from >= s.x.length) continue;
      // the longest time between two of the phone's packets while it spoke (this process late, or the platform's packets)
      if (s.startedAt !== null) s.maxGapMs = Math.max(s.maxGapMs, gap);
      // as a live talker's phone: a packet sent now carries what was said in the packet's time before
      // it (its sample i at now - (n - i)/8), never audio yet to be said
      if (s.startedAt === null) s.startedAt = now - (n - Math.max(0, -from)) / 8;
      for (let i = Math.max(0, -from); i < n && from + i < s.x.length; i++) out[i]! += s.x[from + i]!;
      if (from + n >= s.x.length) s.endedAt = now - (n - (s.x.length - from)) / 8;
    }
    this.clock += n;
    const pkt = Buffer.alloc(12 + n);
    pkt[0] = 0x80;
    pkt[1] = 0;
    pkt.writeUInt16BE(this.seq++ & 0xffff, 2);
    pkt.writeUInt32BE(this.ts >>> 0, 4);
    pkt.writeUInt32BE(this.ssrc, 8);
    this.ts += n;
    for (let i = 0; i < n; i++) pkt[12 + i] = ulawEncode(out[i]!);
    this.sock.send(pkt, port, host);
  }

  private count(ssrc: number, seq: number): void {
    const st = this.streams.get(ssrc);
    if (!st) return void this.streams.set(ssrc, { first: seq, last: seq, received: 1 });
    // the extended sequence number nearest to the highest one seen (wraps at 65536)
    let ext = (st.last & ~0xffff) | seq;
    if (ext < st.last - 0x8000) ext += 0x10000;
    else if (ext > st.last + 0x8000) ext -= 0x10000;
    st.last = Math.max(st.last, ext);
    st.first = Math.min(st.first, ext);
    st.received++;
  }

  /** RTP from the platform: packets received, and lost (gaps in each stream's sequence numbers). */
  rtpStats(): { received: number; lost: number } {
    let received = 0;
    let lost = 0;
    for (const st of this.streams.values()) {
      received += st.received;
      lost += Math.max(0, st.last - st.first + 1 - st.received);
    }
    return { received, lost };
  }

  /** Arrival times of packets that carry speech. */
  voicedTimes(threshold = 300): number[] {
    return this.packets.filter((p) => p.level > threshold).map((p) => p.at);
  }

  close(): void {
    this.sock.close();
  }
}
