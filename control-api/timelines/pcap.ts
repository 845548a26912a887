/**
 * A pcap file (libpcap format, LINKTYPE_RAW: each record an IPv4 or IPv6 packet) of captured SIP
 * messages and, when the media nodes captured them, the legs' RTP/RTCP datagrams (UDP). The IP and UDP/TCP headers are synthesized from the addresses the stack saw; TCP, TLS
 * and WebSocket messages are written as TCP segments carrying the SIP text (as the stack read it,
 * after TLS), with sequence numbers continuing per direction of each connection, so Wireshark's
 * SIP dissector reads them.
 */
import { isIP } from 'node:net';
import type { CapturedMessage } from '../../core/sip/capture-store';
import type { CapturedDatagram } from '../../core/media/rtp-capture';

const LINKTYPE_RAW = 101;
const SNAPLEN = 262_144;
/** Largest SIP payload of one synthesized packet (IPv4 total length is 16 bits). */
const MAX_PAYLOAD = 65_000;

function ipBytes(addr: string): { v: 4 | 6; b: Buffer } {
  const a = addr.startsWith('[') ? addr.slice(1, -1) : addr;
  if (isIP(a) === 4) return { v: 4, b: Buffer.from(a.split('.').map(Number)) };
  if (isIP(a) === 6) return { v: 6, b: ipv6Bytes(a) };
  return { v: 4, b: Buffer.alloc(4) }; // a host name (an advertised host that is not an address): 0.0.0.0
}

function ipv6Bytes(a: string): Buffer {
  let s = a.split('%')[0]!;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const p = v4[1]!.split('.').map(Number);
    s = s.slice(0, -v4[1]!.length) + `${((p[0]! << 8) | p[1]!).toString(16)}:${((p[2]! << 8) | p[3]!).toString(16)}`;
  }
  const [head, tail] = s.includes('::') ? (s.split('::') as [string, string]) : [s, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g || '0', 16), i * 2));
  return out;
}

function sum16(buf: Buffer, acc = 0): number {
  for (let i = 0; i + 1 < buf.length; i += 2) acc += buf.readUInt16BE(i);
  if (buf.length % 2) acc += buf[buf.length - 1]! << 8;
  return acc;
}

function fold(acc: number): number {
  while (acc > 0xffff) acc = (acc & 0xffff) + (acc >>> 16);
  return ~acc & 0xffff;
}

/** The transport segment's checksum over the pseudo-header (RFC 768, RFC 793, RFC 8200 8.1). */
function l4Checksum(src: Buffer, dst: Buffer, proto: number, segment: Buffer): number {
  const len = segment.length;
  let acc = sum16(src) + sum16(dst) + proto + (len & 0xffff) + (len >>> 16);
  acc = sum16(segment, acc);
  const c = fold(acc);
  return c === 0 && proto === 17 ? 0xffff : c;
}

function ipPacket(src: { v: 4 | 6; b: Buffer }, dst: { v: 4 | 6; b: Buffer }, proto: number, segment: Buffer, ident: number): Buffer {
  if (src.v === 4 && dst.v === 4) {
    const h = Buffer.alloc(20);
    h[0] = 0x45;
    h.writeUInt16BE(20 + segment.length, 2);
    h.writeUInt16BE(ident & 0xffff, 4);
    h.writeUInt16BE(0x4000, 6); // don't fragment
    h[8] = 64;
    h[9] = proto;
    src.b.copy(h, 12);
    dst.b.copy(h, 16);
    h.writeUInt16BE(fold(sum16(h)), 10);
    return Buffer.concat([h, segment]);
  }
  // mixed families (cannot happen on one socket) are written as IPv6 with IPv4-mapped addresses
  const six = (x: { v: 4 | 6; b: Buffer }) => (x.v === 6 ? x.b : Buffer.concat([Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]), x.b]));
  const h = Buffer.alloc(40);
  h.writeUInt32BE(0x60000000, 0);
  h.writeUInt16BE(segment.length, 4);
  h[6] = proto;
  h[7] = 64;
  six(src).copy(h, 8);
  six(dst).copy(h, 24);
  return Buffer.concat([h, segment]);
}

function udpSegment(srcPort: number, dstPort: number, payload: Buffer, src: Buffer, dst: Buffer): Buffer {
  const s = Buffer.alloc(8 + payload.length);
  s.writeUInt16BE(srcPort, 0);
  s.writeUInt16BE(dstPort, 2);
  s.writeUInt16BE(s.length, 4);
  payload.copy(s, 8);
  s.writeUInt16BE(l4Checksum(src, dst, 17, s), 6);
  return s;
}

function tcpSegment(srcPort: number, dstPort: number, seq: number, ack: number, payload: Buffer, src: Buffer, dst: Buffer): Buffer {
  const s = Buffer.alloc(20 + payload.length);
  s.writeUInt16BE(srcPort, 0);
  s.writeUInt16BE(dstPort, 2);
  s.writeUInt32BE(seq >>> 0, 4);
  s.writeUInt32BE(ack >>> 0, 8);
  s[12] = 5 << 4;
  s[13] = 0x18; // PSH, ACK
  s.writeUInt16BE(65535, 14);
  payload.copy(s, 20);
  s.writeUInt16BE(l4Checksum(src, dst, 6, s), 16);
  return s;
}

/**
 * An RTP/RTCP datagram as a UDP packet whose lengths are the wire's; a cut datagram (headers-only, over
 * the snap length) keeps only its first bytes, like a capture with a snap length, and has no UDP checksum.
 */
function mediaRecord(d: CapturedDatagram, ident: number): { packet: Buffer; origLen: number } {
  const src = ipBytes(d.srcIp);
  const dst = ipBytes(d.dstIp);
  const whole = d.bytes.length === d.length;
  if (whole) return { packet: ipPacket(src, dst, 17, udpSegment(d.srcPort, d.dstPort, d.bytes, src.b, dst.b), ident), origLen: 28 + d.length };
  const udp = Buffer.alloc(8);
  udp.writeUInt16BE(d.srcPort, 0);
  udp.writeUInt16BE(d.dstPort, 2);
  udp.writeUInt16BE(8 + d.length, 4);
  const packet = ipPacket(src, dst, 17, Buffer.concat([udp, d.bytes]), ident);
  packet.writeUInt16BE(28 + d.length, 2); // the IPv4 total length on the wire
  packet.writeUInt16BE(0, 10);
  packet.writeUInt16BE(fold(sum16(packet.subarray(0, 20))), 10);
  return { packet, origLen: 28 + d.length };
}

/** The pcap file of these SIP messages (in their order) and captured RTP/RTCP datagrams, merged by time. */
export function buildPcap(messages: CapturedMessage[], media: CapturedDatagram[] = []): Buffer {
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(SNAPLEN, 16);
  header.writeUInt32LE(LINKTYPE_RAW, 20);
  const parts: Buffer[] = [header];
  // next sequence number per TCP direction ("src|dst")
  const seqs = new Map<string, number>();
  let ident = 1;
  let mi = 0;
  const mediaUntil = (us: number) => {
    for (; mi < media.length && media[mi]!.us <= us; mi++) {
      const { packet, origLen } = mediaRecord(media[mi]!, ident++);
      parts.push(recordHeader(media[mi]!.us, packet.length, origLen), packet);
    }
  };
  for (const m of messages) {
    mediaUntil(m.us);
    const src = ipBytes(m.srcIp);
    const dst = ipBytes(m.dstIp);
    const v6 = src.v === 6 || dst.v === 6;
    const pseudo = (x: { v: 4 | 6; b: Buffer }) => (v6 && x.v === 4 ? Buffer.concat([Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]), x.b]) : x.b);
    const raw = Buffer.from(m.raw, 'utf8');
    const chunks: Buffer[] = [];
    for (let i = 0; i < Math.max(1, raw.length); i += MAX_PAYLOAD) chunks.push(raw.subarray(i, i + MAX_PAYLOAD));
    for (const payload of chunks) {
      let packet: Buffer;
      if (m.transport === 'udp') {
        packet = ipPacket(src, dst, 17, udpSegment(m.srcPort, m.dstPort, payload, pseudo(src), pseudo(dst)), ident++);
      } else {
        const fwd = `${m.srcIp}|${m.srcPort}|${m.dstIp}|${m.dstPort}`;
        const rev = `${m.dstIp}|${m.dstPort}|${m.srcIp}|${m.srcPort}`;
        const seq = seqs.get(fwd) ?? 1;
        const ack = seqs.get(rev) ?? 1;
        seqs.set(fwd, (seq + payload.length) >>> 0);
        packet = ipPacket(src, dst, 6, tcpSegment(m.srcPort, m.dstPort, seq, ack, payload, pseudo(src), pseudo(dst)), ident++);
      }
      parts.push(recordHeader(m.us, packet.length, packet.length), packet);
    }
  }
  mediaUntil(Infinity);
  return Buffer.concat(parts);
}

function recordHeader(us: number, inclLen: number, origLen: number): Buffer {
  const rec = Buffer.alloc(16);
  rec.writeUInt32LE(Math.floor(us / 1e6), 0);
  rec.writeUInt32LE(us % 1e6, 4);
  rec.writeUInt32LE(inclLen, 8);
  rec.writeUInt32LE(origLen, 12);
  return rec;
}
