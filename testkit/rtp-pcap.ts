// RTP pcaps for sipp's play_pcap_audio (Ethernet, IPv4, UDP, RTP): sipp keeps the RTP of each
// record and sends it from its own media port at the record's time offset.

/** One RTP packet of the pcap, sent `atUs` after the pcap's start. */
export interface PcapRtp {
  pt: number;
  marker: boolean;
  seq: number;
  ts: number;
  payload: Uint8Array;
  atUs: number;
}

/** What differs between the suites' pcaps: the SSRC, the UDP ports recorded, and whether the IPv4 header carries its checksum. */
export interface PcapOptions {
  ssrc: number;
  srcPort?: number;
  dstPort?: number;
  ipChecksum?: boolean;
}

function ipv4Header(udpLength: number, checksum: boolean): Buffer {
  const ip = Buffer.alloc(20);
  ip[0] = 0x45;
  ip.writeUInt16BE(20 + udpLength, 2);
  ip[8] = 64;
  ip[9] = 17;
  ip.set([127, 0, 0, 1], 12);
  ip.set([127, 0, 0, 1], 16);
  if (checksum) {
    let sum = 0;
    for (let i = 0; i < 20; i += 2) sum += ip.readUInt16BE(i);
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >> 16);
    ip.writeUInt16BE(~sum & 0xffff, 10);
  }
  return ip;
}

/** A pcap of these packets, loopback to loopback. */
export function rtpPcap(rtps: readonly PcapRtp[], o: PcapOptions): Buffer {
  const global = Buffer.alloc(24);
  global.writeUInt32LE(0xa1b2c3d4, 0);
  global.writeUInt16LE(2, 4);
  global.writeUInt16LE(4, 6);
  global.writeUInt32LE(65535, 16);
  global.writeUInt32LE(1, 20); // Ethernet
  const parts: Buffer[] = [global];
  for (const p of rtps) {
    const rtp = Buffer.alloc(12 + p.payload.length);
    rtp[0] = 0x80;
    rtp[1] = (p.marker ? 0x80 : 0) | (p.pt & 0x7f);
    rtp.writeUInt16BE(p.seq & 0xffff, 2);
    rtp.writeUInt32BE(p.ts >>> 0, 4);
    rtp.writeUInt32BE(o.ssrc >>> 0, 8);
    Buffer.from(p.payload).copy(rtp, 12);
    const udp = Buffer.alloc(8);
    udp.writeUInt16BE(o.srcPort ?? 6000, 0);
    udp.writeUInt16BE(o.dstPort ?? 6002, 2);
    udp.writeUInt16BE(8 + rtp.length, 4);
    const eth = Buffer.alloc(14);
    eth.writeUInt16BE(0x0800, 12);
    const frame = Buffer.concat([eth, ipv4Header(udp.length + rtp.length, o.ipChecksum ?? false), udp, rtp]);
    const rec = Buffer.alloc(16);
    rec.writeUInt32LE(Math.floor(p.atUs / 1e6), 0);
    rec.writeUInt32LE(p.atUs % 1e6, 4);
    rec.writeUInt32LE(frame.length, 8);
    rec.writeUInt32LE(frame.length, 12);
    parts.push(rec, frame);
  }
  return Buffer.concat(parts);
}

/** 20 ms PCMU packets (PT 0, 160 bytes each, seq and timestamp from 0) of `ulaw`, the first marked when `markFirst`. */
export function pcmuPackets(ulaw: Uint8Array, markFirst: boolean): PcapRtp[] {
  const out: PcapRtp[] = [];
  for (let n = 0, off = 0; off < ulaw.length; n++, off += 160) {
    out.push({ pt: 0, marker: markFirst && n === 0, seq: n, ts: n * 160, payload: ulaw.subarray(off, off + 160), atUs: n * 20_000 });
  }
  return out;
}
