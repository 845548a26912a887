/**
 * espeak-ng streamed: its WAV output (22.05 kHz) is read as it is produced, low-pass filtered and
 * resampled to 8 kHz here, and handed over in chunks, so the first audio can be sent a few
 * milliseconds after the process starts instead of after the whole text, sox and a file round trip
 * (speakings use it for the embedded provider). Output matches EspeakProvider's voices.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { TtsError } from './provider';

const OUT_RATE = 8000;
const TAPS = 31;

/** Windowed-sinc low-pass taps for `rate` with the cut-off just under 4 kHz. */
function lowpass(rate: number): Float64Array {
  const fc = 3600 / rate;
  const h = new Float64Array(TAPS);
  const m = (TAPS - 1) / 2;
  let sum = 0;
  for (let i = 0; i < TAPS; i++) {
    const x = i - m;
    const sinc = x === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * x) / (Math.PI * x);
    const w = 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (TAPS - 1));
    h[i] = sinc * w;
    sum += h[i]!;
  }
  for (let i = 0; i < TAPS; i++) h[i]! /= sum;
  return h;
}

/** Streaming rate converter: push input samples, get 8 kHz samples out as far as the input allows. */
export class Resampler {
  private readonly h: Float64Array;
  private readonly step: number;
  private buf = new Float64Array(0);
  private base = 0; // index in the whole input stream of buf[0]
  private pos = 0; // next output position, in input samples (absolute)

  constructor(rate: number) {
    this.h = lowpass(rate);
    this.step = rate / OUT_RATE;
  }

  private filtered(i: number): number {
    const start = i - (TAPS - 1) / 2 - this.base;
    let acc = 0;
    for (let k = 0; k < TAPS; k++) {
      const j = start + k;
      if (j >= 0 && j < this.buf.length) acc += this.h[k]! * this.buf[j]!;
    }
    return acc;
  }

  push(samples: Int16Array, final: boolean): Int16Array {
    const nb = new Float64Array(this.buf.length + samples.length);
    nb.set(this.buf);
    for (let i = 0; i < samples.length; i++) nb[this.buf.length + i] = samples[i]!;
    this.buf = nb;
    const m = (TAPS - 1) / 2;
    const limit = this.base + this.buf.length - (final ? 1 : m + 2);
    const out = new Int16Array(Math.max(0, Math.ceil((limit - this.pos) / this.step) + 1));
    let n = 0;
    while (this.pos < limit && n < out.length) {
      const i = Math.floor(this.pos);
      const frac = this.pos - i;
      const v = this.filtered(i) * (1 - frac) + this.filtered(i + 1) * frac;
      out[n++] = v > 32767 ? 32767 : v < -32768 ? -32768 : Math.round(v);
      this.pos += this.step;
    }
    // keep only the input later outputs still read
    const keepFrom = Math.max(0, Math.floor(this.pos) - m - 1 - this.base);
    if (keepFrom > 0) {
      this.buf = this.buf.slice(keepFrom);
      this.base += keepFrom;
    }
    return out.subarray(0, n);
  }
}

export interface EspeakStreamOptions {
  /** espeak `-v` argument (EspeakProvider.voiceArg gives it from language and voice). */
  voice: string;
  speed?: number;
  ssml?: boolean;
  timeoutMs?: number;
}

/** espeak-ng's arguments for these options (text comes on stdin, WAV goes to stdout). */
export function espeakArgs(o: EspeakStreamOptions): string[] {
  const args = ['-v', o.voice, '-s', String(o.speed ?? 165), '--stdout', '--stdin'];
  if (o.ssml) args.push('-m');
  return args;
}

/** Starts an espeak-ng process for these options; it initialises, then waits for its text on stdin. */
export function spawnEspeak(o: EspeakStreamOptions): ChildProcessWithoutNullStreams {
  const child = spawn('espeak-ng', espeakArgs(o), { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.on('error', () => undefined);
  return child;
}

/**
 * Speaks `text`; `onAudio` gets 8 kHz 16-bit samples in order, in multiples of 160 samples (a
 * 20 ms frame) except the last chunk. Resolves with the number of samples produced.
 */
export function espeakStream(text: string, o: EspeakStreamOptions, onAudio: (samples: Int16Array) => void): Promise<number> {
  if (!text.trim()) return Promise.reject(new TtsError('EMPTY_TEXT', 'nothing to say'));
  return speakOn(spawnEspeak(o), text, o.timeoutMs ?? 20_000, onAudio);
}

/**
 * Gives `text` to an espeak-ng process started by spawnEspeak (possibly a while ago, so its start-up
 * is already paid) and streams its audio as in espeakStream.
 */
export function speakOn(child: ChildProcessWithoutNullStreams, text: string, timeoutMs: number, onAudio: (samples: Int16Array) => void, signal?: AbortSignal): Promise<number> {
  let head = Buffer.alloc(0);
  let resampler: Resampler | null = null;
  let carry = Buffer.alloc(0);
  let pending = new Int16Array(0);
  let total = 0;
  let err = '';
  const emit = (samples: Int16Array, final: boolean) => {
    if (signal?.aborted) return;
    const all = new Int16Array(pending.length + samples.length);
    all.set(pending);
    all.set(samples, pending.length);
    const n = final ? all.length : all.length - (all.length % 160);
    if (n > 0) {
      onAudio(all.slice(0, n));
      total += n;
    }
    pending = all.slice(n);
  };
  const feed = (buf: Buffer, final: boolean) => {
    const data = carry.length ? Buffer.concat([carry, buf]) : buf;
    const even = data.length - (data.length % 2);
    carry = Buffer.from(data.subarray(even));
    const s = new Int16Array(even / 2);
    for (let i = 0; i < s.length; i++) s[i] = data.readInt16LE(i * 2);
    emit(resampler!.push(s, final), final);
  };
  child.stdout.on('data', (d: Buffer) => {
    if (resampler) return feed(d, false);
    head = Buffer.concat([head, d]);
    // RIFF header, then chunks until 'data'; the rate comes from 'fmt '
    let off = 12;
    let rate = 0;
    while (off + 8 <= head.length) {
      const id = head.toString('ascii', off, off + 4);
      const size = head.readUInt32LE(off + 4);
      if (id === 'fmt ' && off + 16 <= head.length) rate = head.readUInt32LE(off + 12);
      if (id === 'data') {
        resampler = new Resampler(rate || 22050);
        const rest = head.subarray(off + 8);
        head = Buffer.alloc(0);
        return feed(rest, false);
      }
      off += 8 + size;
    }
  });
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-1000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    // stopped (the prompt was stopped before its text was all spoken): the process ends at once
    const onAbort = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', onAbort, { once: true });
    const fail = (e: Error) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      reject(new TtsError('SYNTHESIS_FAILED', `cannot run espeak-ng: ${e.message}`));
    };
    // a pre-started process may already have failed to start
    if (child.exitCode !== null || child.signalCode !== null) return fail(new Error(`espeak-ng exited before its text (${child.signalCode ?? child.exitCode})`));
    if (signal?.aborted) onAbort();
    child.on('error', fail);
    child.on('close', (code, killed) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) return reject(new TtsError('SYNTHESIS_FAILED', 'espeak-ng stopped: the prompt was stopped'));
      if (code !== 0) return reject(new TtsError(killed ? 'TIMEOUT' : 'SYNTHESIS_FAILED', `espeak-ng failed (${killed ?? code}): ${err.trim().split('\n').pop() ?? ''}`));
      if (resampler) feed(Buffer.alloc(0), true);
      else emit(new Int16Array(0), true);
      resolve(total);
    });
    child.stdin.end(text);
  });
}
