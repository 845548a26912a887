/**
 * The far end's audio for the codec legs benchmark (codec-legs.ts, peer.ts): a tone encoded once
 * up-front with the engine's own codec module (the packets are replayed, so the far end costs no
 * encoding while it measures), and the check that what came back decodes to the tone the other side
 * sent, not silence or something else.
 */
import { createCodec, type Codec } from '../../../media-engine/codecs';

/** The codecs a benchmark leg's far end speaks. */
export type BenchCodec = 'PCMU' | 'G722' | 'opus';
export const BENCH_CODECS: readonly BenchCodec[] = ['PCMU', 'G722', 'opus'];

/** RTP clock ticks per 20 ms packet (G.722's clock is 8000, RFC 3551; Opus's 48000, RFC 7587). */
export const TICKS_PER_FRAME: Record<BenchCodec, number> = { PCMU: 160, G722: 160, opus: 960 };

/** How a far-end leg of the peer sends and what it expects back. */
export interface LegSpec {
  codec: BenchCodec;
  /** the payload type it sends and accepts */
  pt: number;
  /** the tone it sends, Hz (0: digital silence) */
  toneHz: number;
  /** the tone it must hear back, Hz */
  expectHz: number;
}

/** Frames in the replayed loop: 1 s, a whole number of periods of every tone used here (multiples of 50 Hz). */
export const LOOP_FRAMES = 50;
const AMPLITUDE = 8000;

function codecFor(c: BenchCodec): Codec {
  // Opus as the engine runs it: 16 kHz PCM, complexity 5 (the codec's default), in-band FEC
  return createCodec(c);
}

/** `LOOP_FRAMES` packets of a `hz` tone encoded by the engine's codec `c`, in order. */
export function tonePackets(c: BenchCodec, hz: number): Buffer[] {
  const codec = codecFor(c);
  try {
    const n = codec.frameSamples;
    const pcm = new Int16Array(n);
    const buf = new Uint8Array(codec.maxPayloadBytes);
    const out: Buffer[] = [];
    for (let f = 0; f < LOOP_FRAMES; f++) {
      for (let i = 0; i < n; i++) pcm[i] = Math.round(AMPLITUDE * Math.sin((2 * Math.PI * hz * (f * n + i)) / codec.sampleRate));
      out.push(Buffer.from(buf.subarray(0, codec.encode(pcm, buf))));
    }
    return out;
  } finally {
    codec.close();
  }
}

/** What a leg's far end heard: loudness and how much of it is the expected tone. */
export interface ToneHeard {
  /** RMS of the checked frames (int16 scale) */
  rms: number;
  /** share of the signal's power at the expected frequency (Goertzel), 0..1; 1 for a pure tone */
  toneShare: number;
}

/** Loud enough to be the other side's tone (the tone is ~5,600 RMS; codec and resampling lose little). */
export const MIN_TONE_RMS = 1000;
export const MIN_TONE_SHARE = 0.5;

/**
 * Decodes `payloads` (consecutive packets, oldest first) with a fresh decoder and measures the last
 * half of them (the first frames of a new decoder and of the engine's resamplers are a warm-up).
 */
export function hearTone(c: BenchCodec, payloads: readonly Uint8Array[], hz: number): ToneHeard {
  const codec = codecFor(c);
  try {
    const pcm: number[] = [];
    const out = new Int16Array(codec.sampleRate / 10); // up to 100 ms per packet
    const skip = Math.floor(payloads.length / 2);
    payloads.forEach((p, k) => {
      let n = 0;
      try {
        n = codec.decode(p, out);
      } catch {
        n = 0; // an undecodable packet is heard as nothing
      }
      if (k >= skip) for (let i = 0; i < n; i++) pcm.push(out[i]);
    });
    return measureTone(pcm, hz, codec.sampleRate);
  } finally {
    codec.close();
  }
}

/** RMS and the Goertzel power share at `hz` of `pcm` sampled at `rate`. */
export function measureTone(pcm: readonly number[], hz: number, rate: number): ToneHeard {
  const n = pcm.length;
  if (n === 0) return { rms: 0, toneShare: 0 };
  let sq = 0;
  for (const s of pcm) sq += s * s;
  const meanSq = sq / n;
  const w = (2 * Math.PI * hz) / rate;
  const coeff = 2 * Math.cos(w);
  let s1 = 0;
  let s2 = 0;
  for (const x of pcm) {
    const s0 = x + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2; // |X(hz)|²
  const tonePower = (2 * power) / (n * n); // a sine of amplitude A gives A²/2, its mean square
  return { rms: Math.sqrt(meanSq), toneShare: meanSq > 0 ? Math.min(1, tonePower / meanSq) : 0 };
}

/** True when `h` is the expected tone. */
export function isTone(h: ToneHeard): boolean {
  return h.rms >= MIN_TONE_RMS && h.toneShare >= MIN_TONE_SHARE;
}
