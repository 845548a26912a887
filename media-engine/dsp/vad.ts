/**
 * Voice activity detection per 20 ms frame: WebRTC VAD (libfvad compiled to wasm) when it loads,
 * otherwise an adaptive energy VAD, behind the same `Vad` interface.
 *
 * The wasm module is loaded once per thread (each worker has its own copy) and shared by every
 * `FvadVad` instance; each instance owns a native VAD handle and one 320-byte input buffer, so
 * `process()` allocates nothing.
 */
import type { FvadModule } from '@echogarden/fvad-wasm';
import { FRAME_SAMPLES, type Frame } from './frame';

export interface Vad {
  /** true when the frame contains voice. */
  process(frame: Frame): boolean;
  reset(): void;
  /** Free native memory; the instance must not be used afterwards. */
  close(): void;
  readonly kind: 'fvad' | 'energy';
}

export interface VadOptions {
  /** WebRTC aggressiveness 0 (quality) .. 3 (very aggressive). Default 3, as telephony wants. */
  mode?: 0 | 1 | 2 | 3;
  /** 'auto' (default): fvad, falling back to energy if wasm fails; or force one. */
  engine?: 'auto' | 'fvad' | 'energy';
  /** Options of the energy fallback. */
  energy?: EnergyVadOptions;
}

const N = FRAME_SAMPLES;

let modulePromise: Promise<FvadModule> | null = null;

/** Load (once) the fvad wasm module. Rejects if the package or its wasm cannot be loaded. */
export function loadFvad(): Promise<FvadModule> {
  modulePromise ??= (async () => {
    // A real dynamic import (TS keeps it in CommonJS output): the package is ESM-only.
    const mod = await import('@echogarden/fvad-wasm');
    const factory = (mod.default ?? mod) as unknown as (arg?: object) => Promise<FvadModule>;
    return factory();
  })().catch((err: unknown) => {
    modulePromise = null;
    throw err;
  });
  return modulePromise;
}

export class FvadVad implements Vad {
  readonly kind = 'fvad' as const;
  private handle: number;
  private ptr: number;

  constructor(
    private readonly m: FvadModule,
    mode: 0 | 1 | 2 | 3 = 3,
  ) {
    this.handle = m._fvad_new();
    if (!this.handle) throw new Error('fvad_new failed');
    if (m._fvad_set_sample_rate(this.handle, 8000) !== 0 || m._fvad_set_mode(this.handle, mode) !== 0) {
      m._fvad_free(this.handle);
      throw new Error('fvad: bad sample rate or mode');
    }
    this.ptr = m._malloc(N * 2);
  }

  process(frame: Frame): boolean {
    if (frame.length !== N) throw new RangeError(`Vad: frame must have ${N} samples`);
    if (!this.handle) throw new Error('Vad: used after close()');
    // HEAP16 is re-read each time: the wasm memory may have grown and replaced the view.
    this.m.HEAP16.set(frame, this.ptr >> 1);
    return this.m._fvad_process(this.handle, this.ptr, N) === 1;
  }

  reset(): void {
    if (this.handle) this.m._fvad_reset(this.handle);
  }

  close(): void {
    if (!this.handle) return;
    this.m._fvad_free(this.handle);
    this.m._free(this.ptr);
    this.handle = this.ptr = 0;
  }
}

export interface EnergyVadOptions {
  /** Absolute floor: frames with RMS below this are never voice. Default 300 (≈ -41 dBFS). */
  minLevel?: number;
  /** Voice when RMS exceeds the tracked noise floor by this factor. Default 3 (~10 dB). */
  snrFactor?: number;
  /** Frames a voiced decision is held after energy drops (hangover). Default 4 (80 ms). */
  hangoverFrames?: number;
}

/** Fallback VAD: RMS against an adaptive noise floor, with hangover to bridge short dips. */
export class EnergyVad implements Vad {
  readonly kind = 'energy' as const;
  private floor = 0;
  private hang = 0;
  private readonly minLevel: number;
  private readonly snr: number;
  private readonly hangover: number;

  constructor(opts: EnergyVadOptions = {}) {
    this.minLevel = opts.minLevel ?? 300;
    this.snr = opts.snrFactor ?? 3;
    this.hangover = opts.hangoverFrames ?? 4;
  }

  process(frame: Frame): boolean {
    if (frame.length !== N) throw new RangeError(`Vad: frame must have ${N} samples`);
    let e = 0;
    for (let i = 0; i < frame.length; i++) e += frame[i] * frame[i];
    const level = Math.sqrt(e / frame.length);
    // Noise floor follows quiet frames quickly and loud frames very slowly.
    if (this.floor === 0) this.floor = level;
    else this.floor += (level < this.floor ? 0.2 : 0.002) * (level - this.floor);
    const voiced = level >= this.minLevel && level > this.floor * this.snr;
    if (voiced) this.hang = this.hangover;
    else if (this.hang > 0) {
      this.hang--;
      return level >= this.minLevel;
    }
    return voiced;
  }

  reset(): void {
    this.floor = 0;
    this.hang = 0;
  }

  close(): void {}
}

/** Create a VAD; with engine 'auto' a wasm failure silently yields the energy VAD (check `.kind`). */
export async function createVad(opts: VadOptions = {}): Promise<Vad> {
  const engine = opts.engine ?? 'auto';
  if (engine !== 'energy') {
    try {
      return new FvadVad(await loadFvad(), opts.mode ?? 3);
    } catch (err) {
      if (engine === 'fvad') throw err;
    }
  }
  return new EnergyVad(opts.energy);
}

/** Voiced segments [startMs, endMs) from per-frame decisions (20 ms frames). */
export function voicedSegments(decisions: readonly boolean[], frameMs = 20): Array<[number, number]> {
  const segs: Array<[number, number]> = [];
  let start = -1;
  decisions.forEach((v, i) => {
    if (v && start < 0) start = i;
    if (!v && start >= 0) {
      segs.push([start * frameMs, i * frameMs]);
      start = -1;
    }
  });
  if (start >= 0) segs.push([start * frameMs, decisions.length * frameMs]);
  return segs;
}
