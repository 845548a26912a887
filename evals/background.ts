/**
 * The caller's background audio, mixed into every frame it sends (RtpPhone.setBackground), speech or
 * silence alike: `noise` (white or pink, at an RMS level), `babble` (several espeak-ng voices saying
 * different sentences at once, summed, at an RMS level), `echo` (the agent's audio as the caller heard
 * it fed back at a gain after a delay, as a speakerphone's loudspeaker reaches its microphone). Noise and
 * babble are made before the call (a loop of a few seconds), so nothing is synthesised on the RTP clock;
 * the echo is a delay line filled by the heard packets.
 */
import type { EvalBackground } from '../core/evals/schema';
import type { RtpPhone } from './rtp-phone';
import { speak } from './speech';

const RATE = 8000;
/** a noise loop's length: long enough that its repeat is not heard as a pattern */
const NOISE_SECONDS = 4;
const BABBLE_LINES = [
  'I told her the train would be late again this morning.',
  'Can you pass me the menu, the one with the desserts?',
  'We should book the hotel before the prices go up.',
  'My brother fixed the car himself last weekend.',
  'Did you see the match on Saturday night?',
  'The meeting moved to Thursday at half past two.',
  'She bought a new coat for the winter holidays.',
  'They are painting the kitchen a pale shade of green.',
];
/** espeak-ng variants for the babble's talkers: different voices, not one voice repeated */
const BABBLE_VARIANTS = ['m1', 'f2', 'm3', 'f4', 'm5', 'f1', 'm7', 'f3'];

export const dbfsToRms = (db: number): number => 32768 * 10 ** (db / 20);

function rms(x: Float64Array | Int16Array): number {
  let s = 0;
  for (const v of x) s += v * v;
  return Math.sqrt(s / (x.length || 1));
}

/** `x` scaled to RMS `level_db` dBFS. */
function toLevel(x: Float64Array, levelDb: number): Float64Array {
  const k = dbfsToRms(levelDb) / (rms(x) || 1);
  return x.map((v) => v * k);
}

/** White or pink (Paul Kellet's filter over white) noise, NOISE_SECONDS long, at `levelDb`. */
export function noise(color: 'white' | 'pink', levelDb: number): Float64Array {
  const n = NOISE_SECONDS * RATE;
  const out = new Float64Array(n);
  let b0 = 0,
    b1 = 0,
    b2 = 0;
  for (let i = 0; i < n; i++) {
    const w = Math.random() * 2 - 1;
    if (color === 'white') out[i] = w;
    else {
      b0 = 0.99765 * b0 + w * 0.099046;
      b1 = 0.963 * b1 + w * 0.2965164;
      b2 = 0.57 * b2 + w * 1.0526913;
      out[i] = b0 + b1 + b2 + w * 0.1848;
    }
  }
  return toLevel(out, levelDb);
}

/** The talkers summed, unscaled, by voices and language: made once per worker (espeak-ng runs `voices` times), scaled per call. */
const babbleSums = new Map<string, Promise<Float64Array>>();
const BABBLE_CACHE = 16;

/** `voices` talkers, each a different espeak-ng variant saying another sentence, summed (each looped to the longest). */
async function babbleSum(voices: number, language: string): Promise<Float64Array> {
  const lines = await Promise.all(Array.from({ length: voices }, (_, i) => speak(BABBLE_LINES[i % BABBLE_LINES.length]!, language, { variant: BABBLE_VARIANTS[i % BABBLE_VARIANTS.length]! })));
  const n = Math.max(...lines.map((l) => l.length));
  const out = new Float64Array(n);
  // each talker starts at its own offset, so the pauses do not line up
  lines.forEach((l, k) => {
    const shift = Math.floor((k * l.length) / voices);
    for (let i = 0; i < n; i++) out[i]! += l[(i + shift) % l.length]!;
  });
  return out;
}

/** The babble at `levelDb` dBFS RMS. */
export async function babble(voices: number, language: string, levelDb: number): Promise<Float64Array> {
  const key = `${voices} ${language}`;
  let sum = babbleSums.get(key);
  if (!sum) {
    sum = babbleSum(voices, language);
    // languages are the scenarios': the cache stays small however many there are
    if (babbleSums.size >= BABBLE_CACHE) babbleSums.clear();
    babbleSums.set(key, sum);
    // a failed synthesis is not kept: the next call tries again
    sum.catch(() => babbleSums.delete(key));
  }
  return toLevel(await sum, levelDb);
}

const clamp = (v: number) => (v > 32767 ? 32767 : v < -32768 ? -32768 : Math.round(v));

/** A loop mixed into each frame, continuing where the last frame stopped. */
function looped(loop: Float64Array): (frame: Int16Array) => void {
  let at = 0;
  return (frame) => {
    for (let i = 0; i < frame.length; i++) {
      frame[i] = clamp(frame[i]! + loop[at]!);
      at = (at + 1) % loop.length;
    }
  };
}

/** Samples in a sent frame (20 ms at 8 kHz). */
const FRAME = 160;

/**
 * The echo's delay line: heard samples, scaled by the gain, wait behind `delayMs` of silence (primed
 * again whenever it ran dry: the agent's audio stopped); each sent frame takes the next 160. Capped at
 * the delay plus one frame, the oldest dropped: heard packets that come in a burst (jitter, a late
 * batch after a gap) would otherwise lengthen the line for good, the echo ever later than `delayMs`.
 */
export class EchoLine {
  private readonly line: number[] = [];
  private readonly k: number;
  private readonly delay: number;

  constructor(gainDb: number, delayMs: number) {
    this.k = 10 ** (gainDb / 20);
    this.delay = Math.round((delayMs * RATE) / 1000);
  }

  /** A heard packet's samples. */
  heard(pcm: ArrayLike<number>): void {
    const line = this.line;
    if (line.length === 0) for (let i = 0; i < this.delay; i++) line.push(0);
    for (let i = 0; i < pcm.length; i++) line.push(pcm[i]! * this.k);
    const over = line.length - (this.delay + FRAME);
    if (over > 0) line.splice(0, over);
  }

  /** Mixes the next frame's worth into `frame` (nothing while the line holds less than a frame). */
  mix(frame: Int16Array): void {
    if (this.line.length < frame.length) return;
    const take = this.line.splice(0, frame.length);
    for (let i = 0; i < frame.length; i++) frame[i] = clamp(frame[i]! + take[i]!);
  }
}

/** The echo fed by what `phone` hears. */
function echo(phone: RtpPhone, gainDb: number, delayMs: number): { mix: (frame: Int16Array) => void; off: () => void } {
  const line = new EchoLine(gainDb, delayMs);
  const off = phone.onHeard(({ pcm }) => line.heard(pcm));
  return { mix: (frame) => line.mix(frame), off };
}

/** The background, made (noise, babble) before the call. */
export type PreparedBackground = { type: 'loop'; loop: Float64Array } | { type: 'echo'; gainDb: number; delayMs: number };

export async function prepareBackground(b: EvalBackground, language: string): Promise<PreparedBackground> {
  switch (b.type) {
    case 'noise':
      return { type: 'loop', loop: noise(b.color, b.level_db) };
    case 'babble':
      return { type: 'loop', loop: await babble(b.voices, language, b.level_db) };
    case 'echo':
      return { type: 'echo', gainDb: b.gain_db, delayMs: b.delay_ms };
  }
}

/** Mixes the background into what `phone` sends; returns what lets go of it (the echo's listener). */
export function attachBackground(phone: RtpPhone, b: PreparedBackground): () => void {
  if (b.type === 'loop') {
    phone.setBackground(looped(b.loop));
    return () => undefined;
  }
  const e = echo(phone, b.gainDb, b.delayMs);
  phone.setBackground(e.mix);
  return e.off;
}
