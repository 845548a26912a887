// A reader of the platform's pcap files (libpcap, LINKTYPE_RAW, IPv4) for tests where tshark is not
// installed: each record's times and lengths, its IPv4 and UDP/TCP header fields and its payload.

export interface PcapPacket {
  us: number;
  inclLen: number;
  origLen: number;
  proto: number;
  ipTotalLen: number;
  src: string;
  dst: string;
  srcPort: number;
  dstPort: number;
  /** the UDP header's length field (UDP only) */
  udpLen: number;
  /** the transport payload as captured (possibly cut) */
  payload: Buffer;
}

const ip = (b: Buffer, at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;

export function readPcap(buf: Buffer): { linkType: number; packets: PcapPacket[] } {
  if (buf.length < 24 || buf.readUInt32LE(0) !== 0xa1b2c3d4) throw new Error('not a little-endian pcap');
  const linkType = buf.readUInt32LE(20);
  const packets: PcapPacket[] = [];
  for (let at = 24; at + 16 <= buf.length;) {
    const inclLen = buf.readUInt32LE(at + 8);
    const origLen = buf.readUInt32LE(at + 12);
    const us = buf.readUInt32LE(at) * 1e6 + buf.readUInt32LE(at + 4);
    const p = buf.subarray(at + 16, at + 16 + inclLen);
    at += 16 + inclLen;
    if (p.length < 20 || p[0]! >> 4 !== 4) continue;
    const ihl = (p[0]! & 15) * 4;
    const proto = p[9]!;
    const l4 = p.subarray(ihl);
    const hdr = proto === 17 ? 8 : ((l4[12] ?? 0x50) >> 4) * 4;
    packets.push({
      us,
      inclLen,
      origLen,
      proto,
      ipTotalLen: p.readUInt16BE(2),
      src: ip(p, 12),
      dst: ip(p, 16),
      srcPort: l4.readUInt16BE(0),
      dstPort: l4.readUInt16BE(2),
      udpLen: proto === 17 ? l4.readUInt16BE(4) : 0,
      payload: l4.subarray(hdr),
    });
  }
  return { linkType, packets };
}
