/**
 * The caller's background audio, mixed into every frame it sends (RtpPhone.setBackground), speech or
 * silence alike: `noise` (white or pink, at an RMS level), `babble` (several espeak-ng voices saying
 * different sentences at once, summed, at an RMS level), `echo` (the agent's audio as the caller heard
 * it fed back at a gain after a delay, as a speakerphone's loudspeaker reaches its microphone). Noise and
 * babble are made before the call (a loop of a few seconds), so nothing is synthesised on the RTP clock;
 * the echo is a delay line on time, filled by the heard packets (EchoLine).
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

/** White or pink (Paul Kellet's filter over white) noise, NOISE_SECONDS long, at `levelDb`; `random` in [0, 1) draws it. */
export function noise(color: 'white' | 'pink', levelDb: number, random: () => number = Math.random): Float64Array {
  const n = NOISE_SECONDS * RATE;
  const out = new Float64Array(n);
  let b0 = 0,
    b1 = 0,
    b2 = 0;
  for (let i = 0; i < n; i++) {
    const w = random() * 2 - 1;
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

/** Heard audio kept for the echo: more than the longest delay (2 s, the schema's limit) plus a late packet's slack. */
const KEEP = RATE * 4;
/** A heard packet this far off the stream's timeline (ms) starts a new one (another stream, a jump in its clock). */
const RESTART_MS = 1000;
/** A stream too late to echo whole, for this long (ms of arrivals, and as much audio), is placed anew. */
const BEHIND_MS = 500;
/** The phone's frame (ms): a frame takes what its echo needs when it goes, up to a frame before the last sample's echo is due. */
const FRAME_MS = 20;
/** Samples a millisecond. */
const PER_MS = RATE / 1000;

/**
 * The echo's delay line, on time rather than on packet counts: each heard sample is placed at the moment
 * the platform sent it (its RTP timestamp on the local clock, anchored by the promptest packet: arrival
 * minus timestamp), as the caller's loudspeaker plays it; a sent frame, due at `due`, picks up what was
 * played `delayMs` before each of its samples, scaled by the gain, as its microphone does. So the echo is
 * exactly `delayMs` behind the platform's audio as the phone plays it, whether heard packets were read in
 * a burst or the phone's timer fired late and sent several frames at once (a loaded machine does both). Audio not yet
 * read when the frame that should echo it goes is left out, never echoed later than `delayMs`
 * (test/evals/echo-line.test.ts); after an event-loop stall the phone reads what came meanwhile before
 * its frames go (rtp-phone.ts; up to libuv's 32 datagrams a read, 640 ms of audio), so after a shorter
 * stall only a packet still on its way then is. A stream that stays too late to be echoed whole (more
 * than `delayMs` less a frame after its place), every packet for BEHIND_MS of arrivals and of audio (a
 * longer network path from now on, a sender fallen behind its own clock), is re-anchored where it now
 * comes, by the least it was late, as a phone's buffer that ran dry starts again from the packets as
 * they come: its echo goes on `delayMs` after the audio is now played, not silent for good. A stall's
 * burst, read at one moment and followed by packets on time, is not (its arrivals span no time); with a
 * delay under the path's jitter every run is, by the least lateness, about nothing.
 */
export class EchoLine {
  private readonly k: number;
  private readonly samples = new Float64Array(KEEP);
  /** which heard sample (its index on the unwrapped timeline, 8 a ms) each slot holds; -1: none */
  private readonly index = new Float64Array(KEEP).fill(-1);
  /** local ms (performance.now()) of heard sample 0: arrival minus the sample's place on the timeline, the least seen (since the last re-anchor) */
  private offset: number | null = null;
  private ssrc: number | null = null;
  private lastTs = 0;
  /** the last packet's first sample on the timeline */
  private lastIndex = 0;
  /** when the run of packets too late to echo whole began (performance.now()), null when the last was not; the least any of it was late, and its audio, ms */
  private behindSince: number | null = null;
  private behindLeast = 0;
  private behindAudio = 0;

  constructor(
    gainDb: number,
    private readonly delayMs: number,
  ) {
    this.k = 10 ** (gainDb / 20);
  }

  /** A heard packet: its samples, RTP timestamp and SSRC, and when it was read (performance.now()). */
  heard(pcm: ArrayLike<number>, ts: number, ssrc: number, at: number): void {
    // the timestamp's step from the last packet, across its 32-bit wrap
    let i0 = this.lastIndex + ((ts - this.lastTs) | 0);
    if (this.offset === null) {
      i0 = 0;
      this.offset = at;
    } else if (ssrc !== this.ssrc || Math.abs(at - i0 / PER_MS - this.offset) > RESTART_MS) {
      // another stream, or a jump in this one's clock: it goes on from the moment this packet came
      i0 = Math.round((at - this.offset) * PER_MS);
    }
    this.offset = Math.min(this.offset, at - i0 / PER_MS);
    this.offset += this.followLate(at - i0 / PER_MS - this.offset, at, pcm.length / PER_MS);
    this.ssrc = ssrc;
    this.lastTs = ts;
    this.lastIndex = i0;
    for (let i = Math.max(0, -i0); i < pcm.length; i++) {
      const slot = (i0 + i) % KEEP;
      this.samples[slot] = pcm[i]! * this.k;
      this.index[slot] = i0 + i;
    }
  }

  /**
   * A packet `late` ms after its place on the timeline, read at `at`, holding `ms` of audio: the shift
   * of the timeline (ms) once a run of packets too late to echo whole has lasted BEHIND_MS, else 0.
   */
  private followLate(late: number, at: number, ms: number): number {
    if (late <= this.delayMs - FRAME_MS) {
      this.behindSince = null;
      return 0;
    }
    if (this.behindSince === null) {
      this.behindSince = at;
      this.behindLeast = late;
      this.behindAudio = ms;
      return 0;
    }
    this.behindLeast = Math.min(this.behindLeast, late);
    this.behindAudio += ms;
    if (at - this.behindSince < BEHIND_MS || this.behindAudio < BEHIND_MS) return 0;
    this.behindSince = null;
    return this.behindLeast;
  }

  /** Mixes into `frame`, due at `due` (performance.now()), what was heard `delayMs` before each of its samples. */
  mix(frame: Int16Array, due: number): void {
    if (this.offset === null) return;
    const first = Math.round((due - this.delayMs - this.offset) * PER_MS);
    for (let i = 0; i < frame.length; i++) {
      const at = first + i;
      if (at < 0) continue;
      const slot = at % KEEP;
      if (this.index[slot] === at) frame[i] = clamp(frame[i]! + this.samples[slot]!);
    }
  }
}

/** The echo fed by what `phone` hears. */
function echo(phone: RtpPhone, gainDb: number, delayMs: number): { mix: (frame: Int16Array, due: number) => void; off: () => void } {
  const line = new EchoLine(gainDb, delayMs);
  const off = phone.onHeard(({ pcm, ts, ssrc, at }) => line.heard(pcm, ts, ssrc, at));
  return { mix: (frame, due) => line.mix(frame, due), off };
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
