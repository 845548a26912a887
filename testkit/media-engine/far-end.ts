// A far end of a wideband test call on a raw UDP socket: it offers one codec (G.722 or PCMU), sends
// a sum of tones as paced 20 ms RTP packets and decodes every packet it receives, so a test can tell
// which frequencies crossed the engine (a 6 kHz tone crosses only a 16 kHz path).
import dgram from 'node:dgram';
import type { Endpoint, MediaServer } from '../../media-engine';
import { createCodec, type Codec } from '../../media-engine/codecs';
import { goertzelCoeff, goertzelPower, relativePower } from '../../media-engine/dsp/goertzel';
import { sleep } from './support';

export type FarCodec = 'G722' | 'PCMU';

export class ToneFarEnd {
  private readonly sock = dgram.createSocket('udp4');
  private readonly tx: Codec;
  private readonly rx: Codec;
  private readonly heard: Int16Array[] = [];
  /** G.722 packets received whose upper band was empty (every code word's top 2 bits set: coded from 8 kHz) */
  upperBandEmpty = 0;
  received = 0;
  private remotePort = 0;
  private stopped = false;
  port = 0;

  constructor(readonly codec: FarCodec) {
    this.tx = createCodec(codec);
    this.rx = createCodec(codec);
    this.sock.on('message', (m) => {
      if (m.length <= 12 || (m[1] & 0x7f) !== this.pt) return;
      const out = new Int16Array(this.rate / 50);
      const n = this.rx.decode(m.subarray(12), out);
      this.heard.push(out.subarray(0, n));
      this.received++;
      if (this.codec === 'G722' && m.subarray(12).every((b) => (b & 0xc0) === 0xc0)) this.upperBandEmpty++;
    });
  }

  get rate(): number {
    return this.codec === 'G722' ? 16000 : 8000;
  }

  private get pt(): number {
    return this.codec === 'G722' ? 9 : 0;
  }

  async open(): Promise<this> {
    await new Promise<void>((r) => this.sock.bind(0, '127.0.0.1', r));
    this.port = this.sock.address().port;
    return this;
  }

  get offer(): string {
    const rtpmap = this.codec === 'G722' ? 'a=rtpmap:9 G722/8000' : 'a=rtpmap:0 PCMU/8000';
    return ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${this.port} RTP/AVP ${this.pt}`, rtpmap, 'a=sendrecv', ''].join('\r\n');
  }

  /** Where the engine's leg listens (its answer's port). */
  sendTo(port: number): this {
    this.remotePort = port;
    return this;
  }

  /** Sends `seconds` of the sum of `tones` (Hz, amplitude each) in paced 20 ms packets. */
  async sendTones(seconds: number, tones: [number, number][]): Promise<void> {
    const rate = this.rate;
    const pcm = new Int16Array(rate / 50);
    const payload = new Uint8Array(400);
    const start = performance.now();
    for (let f = 0; f < seconds * 50 && !this.stopped; f++) {
      for (let i = 0; i < pcm.length; i++) {
        let v = 0;
        for (const [hz, amp] of tones) v += amp * Math.sin((2 * Math.PI * hz * (f * pcm.length + i)) / rate);
        pcm[i] = Math.round(v);
      }
      const n = this.tx.encode(pcm, payload);
      const pkt = Buffer.alloc(12 + n);
      pkt[0] = 0x80;
      pkt[1] = this.pt;
      pkt.writeUInt16BE(f & 0xffff, 2);
      pkt.writeUInt32BE(f * 160, 4); // 160 ticks of the 8000 clock per 20 ms for both codecs
      pkt.writeUInt32BE(0x1234 + this.pt, 8);
      pkt.set(payload.subarray(0, n), 12);
      this.sock.send(pkt, this.remotePort, '127.0.0.1');
      // paced against the start, so the sender does not fall behind the engine's clock
      await sleep(Math.max(0, start + (f + 1) * 20 - performance.now()));
    }
  }

  /** Forgets what was heard so far. */
  clear(): void {
    this.heard.length = 0;
    this.received = 0;
    this.upperBandEmpty = 0;
  }

  /** The last `seconds` heard, as one array at `rate`. */
  lastHeard(seconds: number): Int16Array {
    const all = new Int16Array(this.heard.reduce((n, f) => n + f.length, 0));
    let o = 0;
    for (const f of this.heard) {
      all.set(f, o);
      o += f.length;
    }
    return all.subarray(Math.max(0, all.length - seconds * this.rate));
  }

  close(): void {
    this.stopped = true;
    this.sock.close();
    this.tx.close();
    this.rx.close();
  }
}

/**
 * The middle `seconds` of the voiced part of `x` at `rate` (from the first to the last 20 ms block with at
 * least a tenth of the loudest block's energy), or null when the voiced part is shorter. A tone's share
 * over a window is about the part of the window the tone covers, so a window placed by when a call
 * returned (later under load) measures timing; this one measures the voice.
 */
export function voicedMiddle(x: Int16Array, rate: number, seconds: number): Int16Array | null {
  const block = rate / 50;
  const energy: number[] = [];
  for (let b = 0; b + block <= x.length; b += block) {
    let e = 0;
    for (let i = b; i < b + block; i++) e += x[i] * x[i];
    energy.push(e);
  }
  const max = Math.max(0, ...energy);
  if (!max) return null;
  const first = energy.findIndex((e) => e >= max / 10);
  const last = energy.findLastIndex((e) => e >= max / 10);
  const span = (last - first + 1) * block;
  const want = Math.round(seconds * rate);
  if (span < want) return null;
  const start = first * block + Math.floor((span - want) / 2);
  return x.subarray(start, start + want);
}

/** Mean square of `x`. */
export function power(x: Int16Array): number {
  let e = 0;
  for (let i = 0; i < x.length; i++) e += x[i] * x[i];
  return x.length ? e / x.length : 0;
}

/** The share (0..1) of `x`'s energy at `hz`. */
export function toneShare(x: Int16Array, hz: number, rate: number): number {
  const n = x.length;
  let e = 0;
  for (let i = 0; i < n; i++) e += x[i] * x[i];
  return relativePower(goertzelPower(x, 0, n, goertzelCoeff(hz, rate)), n, e);
}

/**
 * For a describe block: `leg(codec)` opens a far end offering `codec` and the engine leg answering it
 * (sending to it); both are closed after each test, with any endpoint the test hands to `track`.
 */
export function useToneLegs(server: () => MediaServer): { leg: (codec: FarCodec) => Promise<{ far: ToneFarEnd; leg: Endpoint }>; track: (ep: Endpoint) => Endpoint } {
  const fars: ToneFarEnd[] = [];
  const eps: Endpoint[] = [];
  afterEach(async () => {
    for (const f of fars.splice(0)) f.close();
    for (const e of eps.splice(0)) await e.destroy();
  });
  const track = (ep: Endpoint): Endpoint => (eps.push(ep), ep);
  return {
    track,
    async leg(codec) {
      const far = await new ToneFarEnd(codec).open();
      fars.push(far);
      const ep = track(await server().createEndpoint({ remoteSdp: far.offer }));
      far.sendTo(ep.local.port);
      return { far, leg: ep };
    },
  };
}

/**
 * Mocha hooks for the suites whose calls are engine legs answering ToneFarEnds: `leg(codec)` opens a far
 * end offering `codec`, makes the engine leg that answers it on `server()` and points the far end at it;
 * every far end is closed and every leg destroyed after each test.
 */
export function useFarEndLegs(server: () => MediaServer): (codec: FarCodec) => Promise<{ far: ToneFarEnd; leg: Endpoint }> {
  const fars: ToneFarEnd[] = [];
  const eps: Endpoint[] = [];
  afterEach(async () => {
    for (const f of fars.splice(0)) f.close();
    for (const e of eps.splice(0)) await e.destroy();
  });
  return async (codec) => {
    const far = await new ToneFarEnd(codec).open();
    fars.push(far);
    const leg = await server().createEndpoint({ remoteSdp: far.offer });
    eps.push(leg);
    far.sendTo(leg.local.port);
    return { far, leg };
  };
}
