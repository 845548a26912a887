/**
 * Sample-rate conversion for legs of different rates (8, 16, 48 kHz): libspeexdsp's windowed-sinc
 * resampler in the native module, one instance per stream (its filter carries the last samples from
 * one frame to the next, so frames join without a seam). Not sample repetition or dropping: going down,
 * what the lower rate cannot carry is filtered out (no aliasing); going up, no images are added.
 *
 * A 20 ms frame converts to exactly 20 ms (160 ↔ 320 ↔ 960 samples); the filter delays the signal by
 * `latencySamples` input samples (about 1-2 ms at quality 5).
 */
import type { NativeCodecs, ResamplerHandle } from '../native/codecs';
import { CodecError, checkInt, rangeError } from './codec';
import { requireNative } from './native-codec';

export interface ResamplerOptions {
  /** speexdsp quality 0-10 (default 5: stop band well over 60 dB down, see README "Codecs"). */
  quality?: number;
}

export class Resampler {
  readonly quality: number;
  /** The filter's delay in input samples. */
  readonly latencySamples: number;
  private readonly n: NativeCodecs;
  private readonly h: ResamplerHandle;
  private open = true;

  constructor(
    readonly inRate: number,
    readonly outRate: number,
    opts: ResamplerOptions = {},
  ) {
    checkInt('Resampler inRate', inRate, 1000, 192000);
    checkInt('Resampler outRate', outRate, 1000, 192000);
    this.quality = checkInt('Resampler quality', opts.quality ?? 5, 0, 10);
    this.n = requireNative('The resampler');
    this.h = this.n.resamplerCreate(inRate, outRate, this.quality);
    this.latencySamples = this.n.resamplerLatency(this.h);
  }

  /** The output length of `samples` input samples when that is whole (a 20 ms frame is). */
  outputLength(samples: number): number {
    return Math.ceil((samples * this.outRate) / this.inRate);
  }

  /** input[0..samples) (default all) converted into out: samples written. Throws when out is too short. */
  process(input: Int16Array, out: Int16Array, samples = input.length): number {
    if (!this.open) throw new CodecError('ERR_CODEC_CLOSED', 'resample: the resampler is closed');
    if (samples > input.length) throw rangeError(`resample: samples ${samples} is more than the input's ${input.length}`);
    return this.n.resample(this.h, input, samples, out);
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    this.n.close(this.h);
  }

  get closed(): boolean {
    return !this.open;
  }
}
