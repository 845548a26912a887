// RTP: a receiver whose address goes into a sipp SDP, measuring what the platform sends (or, with
// `answer`, sending the caller's own stream back as a phone does).
import dgram from 'node:dgram';
import { decodeG711 } from '../../core/audio/g711';

export class RtpSink {
  private sock = dgram.createSocket('udp4');
  port = 0;
  packets = 0;
  /** Per 20 ms packet: mean |sample| of the PCMU or PCMA payload. */
  /** Arrival time (ms, performance.now()) of each packet in `levels`. */
  times: number[] = [];
  levels: number[] = [];

  /** Per far end (address:port) answered: the stream we send it. */
  private readonly answered = new Map<string, { ssrc: number; seq: number; ts: number }>();

  /**
   * `answer`: each packet is answered with a packet of silence of the same payload type back to where it
   * came from, as a phone sends its own stream while it hears ours (the platform ends a call whose far
   * end sends nothing for MEDIA_INACTIVITY_TIMEOUT_MS). Nothing is recorded then: a long run keeps no arrays.
   */
  static async open(opts: { answer?: boolean } = {}): Promise<RtpSink> {
    const s = new RtpSink();
    await new Promise<void>((r) => s.sock.bind(0, '127.0.0.1', r));
    s.port = s.sock.address().port;
    s.sock.on('error', () => undefined);
    s.sock.on('message', (buf, from) => {
      if (buf.length < 12 || (buf[0]! & 0xc0) !== 0x80) return;
      const pt = buf[1]! & 0x7f;
      if (pt !== 0 && pt !== 8) return;
      if (opts.answer) {
        s.packets++;
        s.answer(pt, buf.length - 12 - (buf[0]! & 0x0f) * 4, from.address, from.port);
        return;
      }
      const cc = buf[0]! & 0x0f;
      const payload = buf.subarray(12 + cc * 4);
      let sum = 0;
      for (const v of decodeG711(pt === 0 ? 'PCMU' : 'PCMA', payload)) sum += Math.abs(v);
      s.packets++;
      s.times.push(performance.now());
      s.levels.push(payload.length ? sum / payload.length : 0);
    });
    return s;
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
