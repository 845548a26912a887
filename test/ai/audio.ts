// Audio fixtures made at test time: espeak-ng speech → 8 kHz µ-law → an RTP pcap sipp can play
// (play_pcap_audio); and an RTP sink that timestamps what the platform sends.
import { execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { uacWaitsForBye } from '../media-app/harness';

/** Writes `file` (pcap, Ethernet/IPv4/UDP/RTP PCMU) with `text` spoken; returns when the speech ends, ms after the lead silence. */
export function speechPcap(text: string, file: string, opts: { leadMs?: number; trailMs?: number } = {}): number {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-pcap-'));
  try {
    const wav = path.join(dir, 's.wav');
    const ul = path.join(dir, 's.ul');
    execFileSync('espeak-ng', ['-v', 'en-us', '-s', '160', '-w', wav, text]);
    execFileSync('sox', [wav, '-r', '8000', '-c', '1', '-t', 'ul', ul]);
    const speech = fs.readFileSync(ul);
    const lead = Buffer.alloc(Math.round(((opts.leadMs ?? 200) * 8)), 0xff);
    const trail = Buffer.alloc(Math.round(((opts.trailMs ?? 1500) * 8)), 0xff);
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
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** µ-law bytes as 20 ms RTP packets (PT 0) in a pcap; UDP source port 0 so the platform never latches to sipp's raw sender. */
export function writeRtpPcap(file: string, ulaw: Buffer): void {
  const parts: Buffer[] = [];
  const gh = Buffer.alloc(24);
  gh.writeUInt32LE(0xa1b2c3d4, 0);
  gh.writeUInt16LE(2, 4);
  gh.writeUInt16LE(4, 6);
  gh.writeUInt32LE(65535, 16);
  gh.writeUInt32LE(1, 20); // Ethernet
  parts.push(gh);
  const ssrc = 0x1234abcd;
  for (let i = 0, seq = 0; i < ulaw.length; i += 160, seq++) {
    const payload = Buffer.alloc(160, 0xff);
    ulaw.copy(payload, 0, i, Math.min(ulaw.length, i + 160));
    const rtp = Buffer.alloc(12);
    rtp[0] = 0x80;
    rtp[1] = 0;
    rtp.writeUInt16BE(seq & 0xffff, 2);
    rtp.writeUInt32BE((seq * 160) >>> 0, 4);
    rtp.writeUInt32BE(ssrc, 8);
    const udpLen = 8 + 12 + 160;
    const udp = Buffer.alloc(8);
    udp.writeUInt16BE(0, 0);
    udp.writeUInt16BE(6000, 2);
    udp.writeUInt16BE(udpLen, 4);
    const ip = Buffer.alloc(20);
    ip[0] = 0x45;
    ip.writeUInt16BE(20 + udpLen, 2);
    ip[8] = 64;
    ip[9] = 17;
    ip.set([127, 0, 0, 1], 12);
    ip.set([127, 0, 0, 1], 16);
    let sum = 0;
    for (let k = 0; k < 20; k += 2) sum += ip.readUInt16BE(k);
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >> 16);
    ip.writeUInt16BE(~sum & 0xffff, 10);
    const eth = Buffer.alloc(14);
    eth.writeUInt16BE(0x0800, 12);
    const frame = Buffer.concat([eth, ip, udp, rtp, payload]);
    const ph = Buffer.alloc(16);
    const us = seq * 20_000;
    ph.writeUInt32LE(Math.floor(us / 1e6), 0);
    ph.writeUInt32LE(us % 1e6, 4);
    ph.writeUInt32LE(frame.length, 8);
    ph.writeUInt32LE(frame.length, 12);
    parts.push(ph, frame);
  }
  fs.writeFileSync(file, Buffer.concat(parts));
}

const MULAW = (() => {
  const t = new Int16Array(256);
  for (let i = 0; i < 256; i++) {
    const u = ~i & 0xff;
    const e = (u >> 4) & 7;
    const s = (((u & 0x0f) << 3) + 0x84) << e;
    t[i] = u & 0x80 ? -(s - 0x84) : s - 0x84;
  }
  return t;
})();

/** Receives the platform's RTP; per packet the arrival time (ms, performance.now) and mean |sample|. */
export class TimedSink {
  private sock = dgram.createSocket('udp4');
  port = 0;
  readonly packets: { at: number; level: number }[] = [];

  static async open(): Promise<TimedSink> {
    const s = new TimedSink();
    await new Promise<void>((r) => s.sock.bind(0, '127.0.0.1', r));
    s.port = s.sock.address().port;
    s.sock.on('message', (buf) => {
      if (buf.length < 12 || (buf[0]! & 0xc0) !== 0x80 || (buf[1]! & 0x7f) !== 0) return;
      const payload = buf.subarray(12 + (buf[0]! & 0x0f) * 4);
      let sum = 0;
      for (const b of payload) sum += Math.abs(MULAW[b]!);
      s.packets.push({ at: performance.now(), level: payload.length ? sum / payload.length : 0 });
    });
    return s;
  }

  /** Arrival times of packets that carry speech. */
  voicedTimes(threshold = 300): number[] {
    return this.packets.filter((p) => p.level > threshold).map((p) => p.at);
  }

  close(): void {
    this.sock.close();
  }
}

/** The sipp UAC scenario of the AI tests: INVITE (audio to the sink), then pcaps played at given offsets after the ACK, then the platform's BYE. */
export function aiCallerScenario(ruri: string, sinkPort: number, plays: { atMs: number; pcap: string }[], byeTimeoutMs = 40_000): string {
  let t = 0;
  const steps = plays
    .map((p) => {
      const wait = Math.max(0, p.atMs - t);
      t = p.atMs;
      return `<pause milliseconds="${wait}"/>\n<nop><action><exec play_pcap_audio="${p.pcap}"/></action></nop>`;
    })
    .join('\n');
  return uacWaitsForBye(ruri, '+15557654321', sinkPort, { steps, byeTimeoutMs });
}
