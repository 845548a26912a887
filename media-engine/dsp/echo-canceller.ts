/**
 * Acoustic echo cancellation for one leg (dsp/README.md "dsp/echo-canceller.ts"): libspeexdsp's MDF
 * adaptive filter in the native codec module, fed 20 ms frames in step: the near end (what came from
 * the phone: the caller, and the echo of what we sent) and the far end (what we sent). It models an
 * echo path up to `tailMs` long (default 500 ms: a speakerphone's 300 ms of echo plus the network and
 * jitter buffer between the frame sent and its echo received) and takes the predicted echo out of the
 * near end; with `residualDb` speexdsp's preprocessor suppresses what echo the filter leaves, by up to
 * that many dB (half as much while the near end talks). The caller's voice passes: the filter adapts
 * only where the near end is explained by the far end (double talk slows its learning).
 *
 * Nothing is allocated per frame; `close()` frees the native state at once.
 */
import type { EchoCancellerHandle, NativeCodecs } from '../native/codecs';
import { CodecError, checkInt, rangeError } from '../codecs/codec';
import { requireNative } from '../codecs/native-codec';

export interface EchoCancellerOptions {
  /** 8000 or 16000 (the leg's rate) */
  rate: number;
  /** the longest echo modelled, in ms (default 500; 20-1000) */
  tailMs?: number;
  /** residual echo suppression in dB (default 0: the filter alone; 1-60) */
  residualDb?: number;
}

export const AEC_DEFAULT_TAIL_MS = 500;

export class EchoCanceller {
  readonly rate: number;
  readonly frameSamples: number;
  readonly tailMs: number;
  readonly residualDb: number;
  private readonly n: NativeCodecs;
  private readonly h: EchoCancellerHandle;
  private open = true;

  constructor(opts: EchoCancellerOptions) {
    if (opts.rate !== 8000 && opts.rate !== 16000) throw rangeError(`EchoCanceller rate must be 8000 or 16000 (got ${String(opts.rate)})`);
    this.rate = opts.rate;
    this.frameSamples = opts.rate / 50;
    this.tailMs = checkInt('EchoCanceller tailMs', opts.tailMs ?? AEC_DEFAULT_TAIL_MS, 20, 1000);
    this.residualDb = checkInt('EchoCanceller residualDb', opts.residualDb ?? 0, 0, 60);
    this.n = requireNative('Echo cancellation');
    this.h = this.n.aecCreate(this.rate, this.frameSamples, (this.tailMs * this.rate) / 1000, this.residualDb);
  }

  /** One 20 ms frame: `near` with the echo of `far` taken out, into `out` (which may be `near`). */
  process(near: Int16Array, far: Int16Array, out: Int16Array = near): void {
    if (!this.open) throw new CodecError('ERR_CODEC_CLOSED', 'aecProcess: the echo canceller is closed');
    this.n.aecProcess(this.h, near, far, out);
  }

  /** Forgets the echo path learnt so far. */
  reset(): void {
    if (this.open) this.n.aecReset(this.h);
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
