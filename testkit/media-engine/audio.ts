// Test-time audio fixtures: real sox and espeak-ng output as 8 kHz 16-bit mono sample arrays.
import { execFileSync } from 'node:child_process';
import { DTMF_FREQS } from '../../media-engine/dsp/tones';

const RAW_OUT = ['-r', '8000', '-b', '16', '-c', '1', '-e', 'signed-integer', '-t', 'raw', '-'];

function toInt16(buf: Buffer): Int16Array {
  const out = new Int16Array(buf.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = buf.readInt16LE(i * 2);
  return out;
}

/** `sox -n ... synth <args>` → samples, e.g. synth(['0.08', 'sine', '697', 'sine', '1209']). */
export function soxSynth(args: string[], extra: string[] = []): Int16Array {
  return toInt16(execFileSync('sox', ['-n', ...RAW_OUT, 'synth', ...args, ...extra], { maxBuffer: 64 << 20 }));
}

/** Spoken text by espeak-ng, resampled by sox to 8 kHz. */
export function espeak(text: string, voice = 'en-us', speed = 160): Int16Array {
  const wav = execFileSync('espeak-ng', ['-v', voice, '-s', String(speed), '--stdout', text], { maxBuffer: 64 << 20 });
  return toInt16(execFileSync('sox', ['-t', 'wav', '-', ...RAW_OUT], { input: wav, maxBuffer: 64 << 20 }));
}

export function silenceMs(ms: number): Int16Array {
  return new Int16Array(Math.round(ms * 8));
}

export function concat(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** a + gain·b sample by sample (b is looped/truncated to a's length), clipped. */
export function mixInto(a: Int16Array, b: Int16Array, gain = 1, offset = 0): Int16Array {
  const out = Int16Array.from(a);
  for (let i = 0; i < b.length && i + offset < a.length; i++) {
    const v = out[i + offset] + gain * b[i];
    out[i + offset] = Math.max(-32768, Math.min(32767, Math.round(v)));
  }
  return out;
}

/** Deterministic white noise of the given RMS (seeded xorshift, so failures reproduce). */
export function noise(samples: number, rms: number, seed = 12345): Int16Array {
  let x = seed >>> 0 || 1;
  const out = new Int16Array(samples);
  const amp = rms * Math.sqrt(3); // uniform in [-a, a] has RMS a/√3
  for (let i = 0; i < samples; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = Math.round(((x / 0xffffffff) * 2 - 1) * amp);
  }
  return out;
}

export function scale(a: Int16Array, gain: number): Int16Array {
  return a.map((s) => Math.max(-32768, Math.min(32767, Math.round(s * gain))));
}

export function rms(a: Int16Array): number {
  let e = 0;
  for (const s of a) e += s * s;
  return Math.sqrt(e / Math.max(1, a.length));
}

/** Call fn on each 160-sample frame (last one zero-padded), with the frame's start time in ms. */
export function forEachFrame(samples: Int16Array, fn: (frame: Int16Array, ms: number) => void): void {
  const frame = new Int16Array(160);
  for (let i = 0; i < samples.length; i += 160) {
    frame.fill(0);
    frame.set(samples.subarray(i, Math.min(i + 160, samples.length)));
    fn(frame, i / 8);
  }
}

/** DTMF sequence made by sox: each digit `onMs` of its two sines (the media engine's DTMF_FREQS), then `offMs` of silence. */
export function soxDtmf(digits: string, onMs = 80, offMs = 80, vol = 0.3): Int16Array {
  const parts: Int16Array[] = [];
  for (const d of digits) {
    const [r, c] = DTMF_FREQS[d];
    parts.push(soxSynth([String(onMs / 1000), 'sine', String(r), 'sine', String(c)], ['vol', String(vol)]));
    parts.push(silenceMs(offMs));
  }
  return concat(...parts);
}
