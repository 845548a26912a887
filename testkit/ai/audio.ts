// Audio fixtures made at test time: espeak-ng speech → 8 kHz µ-law → an RTP pcap sipp can play
// (play_pcap_audio); and an RTP sink that timestamps what the platform sends.
import { execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { uacWaitsForBye } from '../media-app/harness';
import { pcmuPackets, rtpPcap } from '../rtp-pcap';
import { answerInvite, ok200 } from '../media-app/sipp-steps';
import { G711_TABLES } from '../../core/audio/g711';

/**
 * `text` spoken by espeak-ng (en-us, 160 wpm) as 8 kHz µ-law, with espeak-ng's own padding; the same
 * bytes every time (sox -R: its dither is seeded, so a test hears the same audio on every run).
 */
export function espeakUlaw(text: string): Buffer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-ulaw-'));
  try {
    const wav = path.join(dir, 's.wav');
    const ul = path.join(dir, 's.ul');
    execFileSync('espeak-ng', ['-v', 'en-us', '-s', '160', '-w', wav, text]);
    execFileSync('sox', ['-R', wav, '-r', '8000', '-c', '1', '-t', 'ul', ul]);
    return fs.readFileSync(ul);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes `file` (pcap, Ethernet/IPv4/UDP/RTP PCMU) with `text` spoken; returns when the speech ends, ms after the lead silence. */
export function speechPcap(text: string, file: string, opts: { leadMs?: number; trailMs?: number } = {}): number {
  const speech = espeakUlaw(text);
  const lead = Buffer.alloc(Math.round((opts.leadMs ?? 200) * 8), 0xff);
  const trail = Buffer.alloc(Math.round((opts.trailMs ?? 1500) * 8), 0xff);
  writeRtpPcap(file, Buffer.concat([lead, speech, trail]));
  // espeak-ng pads its output with silence: the speech ends at the last loud 20 ms frame
  let lastLoud = 0;
  for (let i = 0; i < speech.length; i += 160) {
    let sum = 0;
    const end = Math.min(speech.length, i + 160);
    for (let k = i; k < end; k++) sum += Math.abs(MULAW[speech[k]!]!);
    if (sum / (end - i) > 300) lastLoud = end;
  }
  return Math.round(lastLoud / 8);
}

/**
 * Mocha hooks: `text` spoken (speechPcap) into a pcap in a temporary folder before the suite, removed
 * after it; `file` is its path and `speech` the spoken µ-law (without lead or trail) once made.
 */
export function useSpeechPcap(prefix: string, text: string, opts: { leadMs?: number; trailMs?: number } = {}): { file: string; speech: Buffer } {
  const made: { file: string; speech: Buffer } = { file: '', speech: Buffer.alloc(0) };
  let dir = '';
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    made.file = path.join(dir, 'hours.pcap');
    speechPcap(text, made.file, opts);
    made.speech = espeakUlaw(text); // the same bytes the pcap carries (espeakUlaw is repeatable)
  });
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  return made;
}

/**
 * Writes `file` with utterances separated by exact pauses: each text spoken by espeak-ng (trimmed
 * to its loud part) or `{ pauseMs }` of silence, after `leadMs` and before `trailMs`. Returns where
 * each utterance starts and ends, ms from the start of the pcap.
 */
export function speechSequencePcap(parts: (string | { pauseMs: number })[], file: string, opts: { leadMs?: number; trailMs?: number } = {}): { text: string; startMs: number; endMs: number }[] {
  const chunks: Buffer[] = [Buffer.alloc(Math.round((opts.leadMs ?? 200) * 8), 0xff)];
  let at = opts.leadMs ?? 200;
  const out: { text: string; startMs: number; endMs: number }[] = [];
  for (const p of parts) {
    if (typeof p !== 'string') {
      chunks.push(Buffer.alloc(Math.round(p.pauseMs * 8), 0xff));
      at += p.pauseMs;
      continue;
    }
    const speech = espeakUlaw(p);
    let first = -1;
    let last = 0;
    for (let i = 0; i < speech.length; i += 160) {
      let sum = 0;
      const end = Math.min(speech.length, i + 160);
      for (let k = i; k < end; k++) sum += Math.abs(MULAW[speech[k]!]!);
      if (sum / (end - i) > 300) {
        if (first < 0) first = i;
        last = end;
      }
    }
    const loud = speech.subarray(Math.max(0, first), last);
    chunks.push(loud);
    out.push({ text: p, startMs: at, endMs: at + loud.length / 8 });
    at += loud.length / 8;
  }
  chunks.push(Buffer.alloc(Math.round((opts.trailMs ?? 1500) * 8), 0xff));
  writeRtpPcap(file, Buffer.concat(chunks));
  return out;
}

/** µ-law bytes as 20 ms RTP packets (PT 0) in a pcap; UDP source port 0 so the platform never latches to sipp's raw sender. */
export function writeRtpPcap(file: string, ulaw: Buffer): void {
  const padded = Buffer.alloc(Math.ceil(ulaw.length / 160) * 160, 0xff); // a last partial packet is filled with µ-law silence
  ulaw.copy(padded);
  fs.writeFileSync(file, rtpPcap(pcmuPackets(padded, false), { ssrc: 0x1234abcd, srcPort: 0, dstPort: 6000, ipChecksum: true }));
}

const MULAW = G711_TABLES.muDecode;

/** Receives the platform's RTP; per packet the arrival time (ms, performance.now) and mean |sample|. */
export class TimedSink {
  private sock = dgram.createSocket('udp4');
  port = 0;
  readonly packets: { at: number; level: number; payload: Buffer }[] = [];

  static async open(): Promise<TimedSink> {
    const s = new TimedSink();
    await new Promise<void>((r) => s.sock.bind(0, '127.0.0.1', r));
    s.port = s.sock.address().port;
    s.sock.on('message', (buf) => {
      if (buf.length < 12 || (buf[0]! & 0xc0) !== 0x80 || (buf[1]! & 0x7f) !== 0) return;
      const payload = buf.subarray(12 + (buf[0]! & 0x0f) * 4);
      let sum = 0;
      for (const b of payload) sum += Math.abs(MULAW[b]!);
      s.packets.push({ at: performance.now(), level: payload.length ? sum / payload.length : 0, payload: Buffer.from(payload) });
    });
    return s;
  }

  /** Arrival times of packets that carry speech. */
  voicedTimes(threshold = 300): number[] {
    return this.packets.filter((p) => p.level > threshold).map((p) => p.at);
  }

  /**
   * For each voiced packet, which of `freqs` (Hz) carries the most energy (Goertzel over its 20 ms of
   * µ-law); returns how many packets each won, and 'none' for packets where none stood out (speech).
   */
  dominantTones(freqs: readonly number[], threshold = 300): Map<number | 'none', number> {
    const won = new Map<number | 'none', number>();
    for (const p of this.packets) {
      if (p.level <= threshold) continue;
      const x = Array.from(p.payload, (b) => MULAW[b]!);
      const power = freqs.map((f) => goertzel(x, f, 8000));
      const total = x.reduce((a, v) => a + v * v, 0) * (x.length / 2);
      const best = power.indexOf(Math.max(...power));
      const key = power[best]! > 0.5 * total ? freqs[best]! : 'none';
      won.set(key, (won.get(key) ?? 0) + 1);
    }
    return won;
  }

  close(): void {
    this.sock.close();
  }
}

function goertzel(x: number[], f: number, rate: number): number {
  const w = (2 * Math.PI * f) / rate;
  const c = 2 * Math.cos(w);
  let s1 = 0;
  let s2 = 0;
  for (const v of x) {
    const s0 = v + c * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return s1 * s1 + s2 * s2 - c * s1 * s2;
}

/** sipp steps that play each pcap `atMs` after the ACK, in order. */
function playSteps(plays: { atMs: number; pcap: string }[]): string {
  let t = 0;
  return plays
    .map((p) => {
      const wait = Math.max(0, p.atMs - t);
      t = p.atMs;
      return `<pause milliseconds="${wait}"/>\n<nop><action><exec play_pcap_audio="${p.pcap}"/></action></nop>`;
    })
    .join('\n');
}

/** The sipp UAC scenario of the AI tests: INVITE (audio to the sink), then pcaps played at given offsets after the ACK, then the platform's BYE. */
export function aiCallerScenario(ruri: string, sinkPort: number | string, plays: { atMs: number; pcap: string }[], byeTimeoutMs = 40_000): string {
  const steps = playSteps(plays);
  return uacWaitsForBye(ruri, '+15557654321', sinkPort, { steps, byeTimeoutMs });
}

/**
 * Writes `file` (an RTP pcap sipp plays) with tones and exact pauses: each `{ hz, ms }` a sine made by
 * sox at half scale, each `{ pauseMs }` silence, after `leadMs` (default 200) and before `trailMs`
 * (default 1500). The STT stand-ins (testkit/speech/tone-stt.ts) name an utterance by its tone.
 */
export function tonePcap(parts: ({ hz: number; ms: number } | { pauseMs: number })[], file: string, opts: { leadMs?: number; trailMs?: number } = {}): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-tone-'));
  try {
    const chunks: Buffer[] = [Buffer.alloc(Math.round((opts.leadMs ?? 200) * 8), 0xff)];
    for (const p of parts) {
      if ('pauseMs' in p) {
        chunks.push(Buffer.alloc(Math.round(p.pauseMs * 8), 0xff));
        continue;
      }
      const ul = path.join(dir, 't.ul');
      execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-t', 'ul', ul, 'synth', String(p.ms / 1000), 'sine', String(p.hz), 'vol', '0.5']);
      chunks.push(fs.readFileSync(ul));
    }
    chunks.push(Buffer.alloc(Math.round((opts.trailMs ?? 1500) * 8), 0xff));
    writeRtpPcap(file, Buffer.concat(chunks));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The sipp UAS scenario of the outbound AI tests: answers the platform's INVITE (audio to the sink),
 * plays pcaps at given offsets after the ACK, then answers the platform's BYE.
 */
export function aiCalleeScenario(sinkPort: number, plays: { atMs: number; pcap: string }[], byeTimeoutMs = 40_000): string {
  const steps = playSteps(plays);
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="ai-callee">
${answerInvite(sinkPort, { tag: 'AiCallee', user: 'callee', retrans: true })}
<recv request="ACK"/>
${steps}
<recv request="BYE" timeout="${byeTimeoutMs}"/>
${ok200}
</scenario>`;
}
