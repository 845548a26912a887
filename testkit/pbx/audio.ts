// The caller's side of a PBX call for sipp, and what the platform sent back. `callerPcap` writes one
// RTP pcap (PCMU silence throughout, sine tones and RFC 4733 telephone-events at given times, UDP
// source port 0 so the platform never latches away from the SDP's address); `ToneSink` receives the
// platform's RTP and finds, per 20 ms packet, how much of it is one frequency (Goertzel).
import { execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import { rtpPcap, type PcapRtp } from '../rtp-pcap';
import { decodeG711 } from '../../core/audio/g711';
import { goertzelCoeff, goertzelPower, relativePower } from '../../media-engine/dsp/goertzel';

/** A tone, a key (RFC 4733), or recorded audio (8 kHz 16-bit samples: speech made with espeak-ng, `speechPcm`). */
export type CallerEvent = { atMs: number; tone: { hz: number; ms: number } } | { atMs: number; digit: string } | { atMs: number; pcm: Int16Array };

/** `text` spoken by espeak-ng as 8 kHz mono 16-bit samples (for a caller's pcap). */
export function speechPcm(text: string): Int16Array {
  const raw = execFileSync('sh', ['-c', 'espeak-ng --stdout "$1" | sox -t wav - -r 8000 -c 1 -b 16 -e signed-integer -t raw -', 'speech', text], { maxBuffer: 64 << 20 });
  return new Int16Array(raw.buffer, raw.byteOffset, Math.floor(raw.length / 2));
}

const DTMF_EVENT: Record<string, number> = { '0': 0, '1': 1, '2': 2, '3': 3, '4': 4, '5': 5, '6': 6, '7': 7, '8': 8, '9': 9, '*': 10, '#': 11 };
/** How long each key is held, and packets per key (20 ms apart, then 3 end packets). */
const KEY_MS = 120;

function ulawEncode(sample: number): number {
  const BIAS = 0x84;
  let s = Math.max(-32635, Math.min(32635, sample));
  const sign = s < 0 ? 0x80 : 0;
  if (sign) s = -s;
  s += BIAS;
  let exp = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exp > 0; mask >>= 1) exp--;
  const mant = (s >> (exp + 3)) & 0x0f;
  return ~(sign | (exp << 4) | mant) & 0xff;
}

/** Writes the caller's pcap: `totalMs` of RTP with these tones and keys; returns the file. */
export function callerPcap(file: string, totalMs: number, events: readonly CallerEvent[]): string {
  const frames = Math.ceil(totalMs / 20);
  const audio = Buffer.alloc(frames * 160, 0xff);
  const keyAt = new Map<number, string>();
  for (const e of events) {
    if ('pcm' in e) {
      const start = Math.round(e.atMs * 8);
      for (let i = 0; i < e.pcm.length && start + i < audio.length; i++) audio[start + i] = ulawEncode(e.pcm[i]!);
    } else if ('tone' in e) {
      const start = Math.round(e.atMs * 8);
      const n = Math.round(e.tone.ms * 8);
      for (let i = 0; i < n && start + i < audio.length; i++) audio[start + i] = ulawEncode(Math.round(12000 * Math.sin((2 * Math.PI * e.tone.hz * i) / 8000)));
    } else {
      if (!(e.digit in DTMF_EVENT)) throw new Error(`not a key: ${e.digit}`);
      keyAt.set(Math.round(e.atMs / 20), e.digit);
    }
  }
  const rtps: PcapRtp[] = [];
  let seq = 0;
  let key: { digit: string; ts: number; n: number } | null = null;
  for (let f = 0; f < frames; f++) {
    const atUs = f * 20_000;
    const ts = f * 160;
    const starts = keyAt.get(f);
    if (starts !== undefined && !key) key = { digit: starts, ts, n: 0 };
    if (key) {
      const held = Math.min(KEY_MS / 20, key.n + 1);
      const end = key.n >= KEY_MS / 20 - 1;
      const payload = Buffer.from([DTMF_EVENT[key.digit]!, (end ? 0x80 : 0) | 10, 0, 0]);
      payload.writeUInt16BE(held * 160, 2);
      const copies = end ? 3 : 1;
      for (let c = 0; c < copies; c++) rtps.push({ pt: 101, marker: key.n === 0 && c === 0, seq: seq++, ts: key.ts, payload, atUs: atUs + c * 100 });
      key.n++;
      if (end) key = null;
      continue;
    }
    rtps.push({ pt: 0, marker: false, seq: seq++, ts, payload: audio.subarray(f * 160, f * 160 + 160), atUs });
  }
  fs.writeFileSync(file, rtpPcap(rtps, { ssrc: 0x5ca1ab1e, srcPort: 0, dstPort: 6000, ipChecksum: true }));
  return file;
}

/** The platform's RTP to the SDP address: each PCMU/PCMA packet's arrival time and samples. */
export class ToneSink {
  private sock = dgram.createSocket('udp4');
  port = 0;
  readonly packets: { at: number; samples: Int16Array }[] = [];

  static async open(): Promise<ToneSink> {
    const s = new ToneSink();
    await new Promise<void>((r) => s.sock.bind(0, '127.0.0.1', r));
    s.port = s.sock.address().port;
    s.sock.on('message', (buf) => {
      if (buf.length < 12 || (buf[0]! & 0xc0) !== 0x80) return;
      const pt = buf[1]! & 0x7f;
      if (pt !== 0 && pt !== 8) return;
      const payload = buf.subarray(12 + (buf[0]! & 0x0f) * 4);
      s.packets.push({ at: performance.now(), samples: Int16Array.from(decodeG711(pt === 0 ? 'PCMU' : 'PCMA', payload)) });
    });
    return s;
  }

  /** Per packet: whether it is loud (mean |sample| above `level`) and mostly `hz` (share above `share`). */
  toneFlags(hz: number, share = 0.6, level = 300): boolean[] {
    const coeff = goertzelCoeff(hz, 8000);
    return this.packets.map(({ samples }) => {
      let energy = 0;
      let abs = 0;
      for (const v of samples) {
        energy += v * v;
        abs += Math.abs(v);
      }
      if (!samples.length || abs / samples.length < level) return false;
      return relativePower(goertzelPower(samples, 0, samples.length, coeff), samples.length, energy) > share;
    });
  }

  /** Milliseconds of `hz` heard in all (20 ms per packet). */
  toneMs(hz: number): number {
    return this.toneFlags(hz).filter(Boolean).length * 20;
  }

  /** Loud stretches (speech, tones) as packet index ranges; quiet gaps shorter than `gap` packets are bridged. */
  loudRuns(level = 300, gap = 15): { start: number; end: number }[] {
    const runs: { start: number; end: number }[] = [];
    this.packets.forEach((p, i) => {
      let abs = 0;
      for (const v of p.samples) abs += Math.abs(v);
      if (!p.samples.length || abs / p.samples.length <= level) return;
      const last = runs[runs.length - 1];
      if (last && i - last.end <= gap) last.end = i;
      else runs.push({ start: i, end: i });
    });
    return runs;
  }

  close(): void {
    this.sock.close();
  }
}

/** Milliseconds of a WAV file (16-bit mono at its rate) that are mostly `hz`, in 20 ms frames. */
export function wavToneMs(samples: Int16Array, rate: number, hz: number, share = 0.6): number {
  const n = Math.round(rate / 50);
  const coeff = goertzelCoeff(hz, rate);
  let frames = 0;
  for (let start = 0; start + n <= samples.length; start += n) {
    let energy = 0;
    for (let i = start; i < start + n; i++) energy += samples[i]! * samples[i]!;
    if (energy / n < 300 * 300) continue;
    if (relativePower(goertzelPower(samples, start, n, coeff), n, energy) > share) frames++;
  }
  return frames * 20;
}
