/**
 * The wideband codec of one leg (G.722 or Opus; G.711 keeps its own table path in rtp-session.ts):
 * the codec instance made from the negotiated media, the leg's PCM rate and 20 ms frame at that rate,
 * the RTP timestamp mapped to PCM samples for the jitter buffer (G.722: 8000 clock for 16 kHz audio,
 * RFC 3551; Opus: 48000 clock for our 16 kHz PCM, RFC 7587), and packets of the negotiated ptime cut
 * from 20 ms frames. Everything per frame writes into buffers made here once.
 */
import { createCodec, type Codec } from '../codecs';
import { opusOptionsFrom } from '../sdp/formats';
import type { NegotiatedMedia } from '../sdp/sdp';
import { tsDiff } from '../rtp-packet/packet';

/** The ptimes a wideband leg sends; another asked for gets 20 ms packets (a=ptime is a wish, RFC 4566). */
const PTIMES = [10, 20, 40, 60];

export class LegCodec {
  readonly codec: Codec;
  /** the PCM rate the leg decodes to and encodes from */
  readonly rate: number;
  /** samples per 20 ms at `rate` */
  readonly frame: number;
  /** RTP clock ticks per 20 ms */
  readonly frameTicks: number;
  readonly ticksPerMs: number;
  /** PCM samples per RTP tick as a fraction: G.722 2/1, Opus at 16 kHz 1/3 */
  private readonly num: number;
  private readonly den: number;
  private lastTs = 0;
  private sampleTs = 0;
  private started = false;
  /** samples waiting for a whole packet of the codec's ptime */
  private readonly pending: Int16Array;
  private pendingLen = 0;
  readonly payload: Uint8Array;
  /** the codec was last told the frames carry 8 kHz audio (Opus narrow band) */
  private narrow = false;

  constructor(readonly media: NegotiatedMedia) {
    const ptime = PTIMES.includes(media.ptime) ? media.ptime : 20;
    if (media.codec === 'opus') this.codec = createCodec('opus', opusOptionsFrom(media.fmtp, ptime));
    else if (media.codec === 'G722') this.codec = createCodec('G722', { ptime });
    else throw new RangeError(`LegCodec is for G722 and opus, not ${media.codec}`);
    this.rate = this.codec.sampleRate;
    this.frame = this.rate / 50;
    this.frameTicks = this.codec.clockRate / 50;
    this.ticksPerMs = this.codec.clockRate / 1000;
    const g = gcd(this.rate, this.codec.clockRate);
    this.num = this.rate / g;
    this.den = this.codec.clockRate / g;
    this.pending = new Int16Array(Math.max(this.codec.frameSamples, this.frame) * 2);
    this.payload = new Uint8Array(this.codec.maxPayloadBytes);
  }

  /** True when `media` needs a new instance (another codec, payload type, fmtp or ptime). */
  differs(media: NegotiatedMedia): boolean {
    const m = this.media;
    return m.codec !== media.codec || m.fmtp !== media.fmtp || m.ptime !== media.ptime || m.clockRate !== media.clockRate;
  }

  /** Forget the timestamp mapping (a new source). */
  reset(): void {
    this.started = false;
  }

  /** An RTP timestamp as a position in PCM samples (an int32 that wraps like the RTP clock). */
  sampleTsOf(ts: number): number {
    if (!this.started) {
      this.started = true;
      this.lastTs = ts | 0;
      this.sampleTs = ts | 0;
      return this.sampleTs;
    }
    const d = tsDiff(ts, this.lastTs);
    this.lastTs = ts | 0;
    this.sampleTs = (this.sampleTs + Math.round((d * this.num) / this.den)) | 0;
    return this.sampleTs;
  }

  /** One packet's payload into `out`: samples written, or 0 when it cannot be decoded (concealed later). */
  decode(msg: Uint8Array, offset: number, length: number, out: Int16Array): number {
    try {
      return this.codec.decode(msg, out, offset, length);
    } catch {
      return 0;
    }
  }

  /** True when a lost packet can be rebuilt from the next one (Opus in-band FEC). */
  get hasFec(): boolean {
    return this.codec.hasFec;
  }

  /** The packet lost just before this one, rebuilt from its in-band FEC into `out`: samples, 0 when it cannot be. */
  recover(msg: Uint8Array, offset: number, length: number, out: Int16Array): number {
    try {
      return this.codec.recover(msg, out, offset, length);
    } catch {
      return 0;
    }
  }

  /** `samples` at `rate` as RTP clock ticks. */
  ticksOf(samples: number): number {
    return (samples * this.den) / this.num;
  }

  /**
   * Takes a 20 ms frame at `rate`; for each whole packet of the codec's ptime now waiting, encodes it
   * into `payload` and calls `send(bytes, ticks)` (ticks: the packet's length on the RTP clock).
   * `narrow`: the frame's audio came at 8 kHz (brought up to `rate`): Opus then codes narrow band.
   */
  encodeFrame(frame: Int16Array, send: (bytes: number, ticks: number) => void, narrow = false): void {
    if (narrow !== this.narrow && this.codec.narrowBand) {
      this.narrow = narrow;
      this.codec.narrowBand(narrow);
    }
    const n = this.codec.frameSamples;
    if (n === this.frame && this.pendingLen === 0) return send(this.codec.encode(frame, this.payload), this.codec.frameTicks);
    const p = this.pending;
    for (let i = 0, o = this.pendingLen; i < this.frame; i++) p[o + i] = frame[i];
    this.pendingLen += this.frame;
    while (this.pendingLen >= n) {
      send(this.codec.encode(this.pending, this.payload), this.codec.frameTicks);
      this.pending.copyWithin(0, n, this.pendingLen);
      this.pendingLen -= n;
    }
  }

  /** True when a 20 ms frame of 8 kHz audio can be coded as it is (G.722 or Opus in 20 ms packets, none part-filled). */
  get takesNarrow(): boolean {
    return this.codec.encodeNarrow !== undefined && this.codec.frameSamples === this.frame && this.pendingLen === 0;
  }

  /** A 20 ms frame of 8 kHz audio coded as it is (only when `takesNarrow`): `send(bytes, ticks)`. */
  encodeNarrowFrame(frame8k: Int16Array, send: (bytes: number, ticks: number) => void): void {
    send(this.codec.encodeNarrow!(frame8k, this.payload), this.codec.frameTicks);
  }

  /** Drops a part-filled packet (a telephone-event took the tick). */
  dropPending(): void {
    this.pendingLen = 0;
  }

  close(): void {
    this.codec.close();
  }
}

function gcd(a: number, b: number): number {
  return b ? gcd(b, a % b) : a;
}
