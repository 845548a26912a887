// A pcap of one RTP stream (PCMU, 20 ms packets) for sipp's play_pcap_audio, made from samples.
import fs from 'node:fs';

function linearToUlaw(sample: number): number {
  const BIAS = 0x84;
  let s = Math.max(-32635, Math.min(32635, sample));
  const sign = s < 0 ? 0x80 : 0;
  if (s < 0) s = -s;
  s += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** Writes `samples` (8 kHz 16-bit mono) as an Ethernet/IPv4/UDP/RTP pcap, one packet per 20 ms. */
export function writeRtpPcap(file: string, samples: Int16Array): void {
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(65535, 16);
  header.writeUInt32LE(1, 20); // Ethernet
  const parts: Buffer[] = [header];
  const ssrc = 0x5eed1234;
  for (let n = 0, off = 0; off + 160 <= samples.length; n++, off += 160) {
    const rtp = Buffer.alloc(12 + 160);
    rtp[0] = 0x80;
    rtp[1] = n === 0 ? 0x80 : 0x00; // marker on the first packet, PT 0
    rtp.writeUInt16BE(n & 0xffff, 2);
    rtp.writeUInt32BE((n * 160) >>> 0, 4);
    rtp.writeUInt32BE(ssrc, 8);
    for (let i = 0; i < 160; i++) rtp[12 + i] = linearToUlaw(samples[off + i]!);
    const udp = Buffer.alloc(8);
    udp.writeUInt16BE(6000, 0);
    udp.writeUInt16BE(6002, 2);
    udp.writeUInt16BE(8 + rtp.length, 4);
    const ip = Buffer.alloc(20);
    ip[0] = 0x45;
    ip.writeUInt16BE(20 + 8 + rtp.length, 2);
    ip[8] = 64;
    ip[9] = 17;
    Buffer.from([127, 0, 0, 1]).copy(ip, 12);
    Buffer.from([127, 0, 0, 1]).copy(ip, 16);
    let sum = 0;
    for (let i = 0; i < 20; i += 2) sum += ip.readUInt16BE(i);
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >> 16);
    ip.writeUInt16BE(~sum & 0xffff, 10);
    const eth = Buffer.alloc(14);
    eth.writeUInt16BE(0x0800, 12);
    const frame = Buffer.concat([eth, ip, udp, rtp]);
    const rec = Buffer.alloc(16);
    const us = n * 20000;
    rec.writeUInt32LE(Math.floor(us / 1e6), 0);
    rec.writeUInt32LE(us % 1e6, 4);
    rec.writeUInt32LE(frame.length, 8);
    rec.writeUInt32LE(frame.length, 12);
    parts.push(rec, frame);
  }
  fs.writeFileSync(file, Buffer.concat(parts));
}
