// RTP: a receiver whose address goes into a sipp SDP, measuring what the platform sends (or, with
// `answer`, sending the caller's own stream back as a phone does). It counts one sender: the one it is
// told (`from`), else the first that sends it RTP (latched); what any other sends is dropped and counted
// in `dropped`, so a stray packet cannot pass for the call's audio. A sink many calls share (a benchmark's,
// a soak's) says so with `many`: then every sender counts.
import dgram from 'node:dgram';
import { decodeG711 } from '../../core/audio/g711';

/** Where RTP comes from: an address and port. */
export interface RtpSender {
  address: string;
  port: number;
}

export interface RtpSinkOptions {
  /** answer each counted packet with silence, as a phone sends its own stream; nothing is recorded then */
  answer?: boolean;
  /** the one sender to count (default: the first that sends RTP, latched) */
  from?: RtpSender;
  /** a sink many calls share: every sender counts (and, with `answer`, each is answered) */
  many?: boolean;
}

export class RtpSink {
  private sock = dgram.createSocket('udp4');
  port = 0;
  packets = 0;
  /** Packets from a sender other than the one counted (any datagram), not counted. */
  dropped = 0;
  /** Per 20 ms packet: mean |sample| of the PCMU or PCMA payload. */
  /** Arrival time (ms, performance.now()) of each packet in `levels`. */
  times: number[] = [];
  levels: number[] = [];
  private counted: RtpSender | null = null;

  /** Per far end (address:port) answered: the stream we send it. */
  private readonly answered = new Map<string, { ssrc: number; seq: number; ts: number }>();

  /** The sender counted: the one told, or the first that sent RTP (null until then); null for a `many` sink. */
  get sender(): RtpSender | null {
    return this.counted ? { ...this.counted } : null;
  }

  /**
   * `answer`: each packet is answered with a packet of silence of the same payload type back to where it
   * came from, as a phone sends its own stream while it hears ours (the platform ends a call whose far
   * end sends nothing for MEDIA_INACTIVITY_TIMEOUT_MS). Nothing is recorded then: a long run keeps no arrays.
   */
  static async open(opts: RtpSinkOptions = {}): Promise<RtpSink> {
    if (opts.many && opts.from) throw new Error('RtpSink: `many` counts every sender, `from` one: not both');
    const s = new RtpSink();
    if (opts.from) s.counted = { address: opts.from.address, port: opts.from.port };
    s.sock.on('error', () => undefined);
    await new Promise<void>((r) => s.sock.bind(0, '127.0.0.1', r));
    s.port = s.sock.address().port;
    s.sock.on('message', (buf, from) => s.receive(buf, from, opts));
    return s;
  }

  /** One datagram: counted when it is PCMU or PCMA RTP from the sender counted (latching the first when none is told). */
  private receive(buf: Buffer, from: dgram.RemoteInfo, opts: RtpSinkOptions): void {
    if (!opts.many && this.counted && (this.counted.address !== from.address || this.counted.port !== from.port)) {
      this.dropped++;
      return;
    }
    if (buf.length < 12 || (buf[0]! & 0xc0) !== 0x80) return;
    const pt = buf[1]! & 0x7f;
    if (pt !== 0 && pt !== 8) return;
    if (!opts.many && !this.counted) this.counted = { address: from.address, port: from.port };
    this.packets++;
    const cc = buf[0]! & 0x0f;
    if (opts.answer) {
      this.answer(pt, buf.length - 12 - cc * 4, from.address, from.port);
      return;
    }
    const payload = buf.subarray(12 + cc * 4);
    let sum = 0;
    for (const v of decodeG711(pt === 0 ? 'PCMU' : 'PCMA', payload)) sum += Math.abs(v);
    this.times.push(performance.now());
    this.levels.push(payload.length ? sum / payload.length : 0);
  }

  private answer(pt: number, samples: number, address: string, port: number): void {
    const key = `${address}:${port}`;
    let st = this.answered.get(key);
    if (!st) this.answered.set(key, (st = { ssrc: (Math.random() * 0x100000000) >>> 0, seq: 0, ts: 0 }));
    st.seq = (st.seq + 1) & 0xffff;
    st.ts = (st.ts + samples) >>> 0;
    const pkt = Buffer.alloc(12 + samples, pt === 0 ? 0xff : 0xd5); // G.711 silence
    pkt[0] = 0x80;
    pkt[1] = pt;
    pkt.writeUInt16BE(st.seq, 2);
    pkt.writeUInt32BE(st.ts, 4);
    pkt.writeUInt32BE(st.ssrc, 8);
    this.sock.send(pkt, port, address);
  }

  /** Packets whose level says speech (well above the silence floor of the codec). */
  get voiced(): number {
    return this.levels.filter((l) => l > 300).length;
  }

  close(): void {
    this.sock.close();
  }
}
