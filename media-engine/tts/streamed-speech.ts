/**
 * A FrameSource over speech that is still being synthesized: the synthesiser pushes 8 kHz samples
 * as it makes them and the player reads 20 ms frames as they come, so a prompt starts playing with
 * its first frames instead of after its whole text. `firstAudio` settles when there is something to
 * play (or the synthesis ended or failed without any). A frame the synthesiser has not made yet
 * (it runs far faster than real time, so only a starved machine sees this) is played as silence and
 * counted in `underruns`. close() (the prompt stopped, the leg gone) stops the synthesis.
 */
import { FRAME_SAMPLES, type Frame, type FrameSource } from '../dsp/frame';

export class StreamedSpeech implements FrameSource {
  private readonly chunks: Int16Array[] = [];
  /** read position in chunks[0] */
  private offset = 0;
  private buffered = 0;
  private ended = false;
  private closed = false;
  private hadAudio = false;
  private readonly stop = new AbortController();
  private settleFirst!: { resolve: () => void; reject: (e: Error) => void };
  /** frames played as silence because the synthesis was behind */
  underruns = 0;
  /** the synthesis failed after its first audio (the prompt ends where the audio did) */
  failure: Error | null = null;
  readonly firstAudio: Promise<void>;

  constructor() {
    this.firstAudio = new Promise<void>((resolve, reject) => (this.settleFirst = { resolve, reject }));
    // a caller that stops waiting (the play was stopped) must not see an unhandled rejection
    this.firstAudio.catch(() => undefined);
  }

  /** Aborted by close(): the synthesis stops. */
  get signal(): AbortSignal {
    return this.stop.signal;
  }

  /** More samples, in order. */
  push(samples: Int16Array): void {
    if (this.closed || this.ended || samples.length === 0) return;
    this.chunks.push(samples);
    this.buffered += samples.length;
    this.hadAudio = true;
    this.settleFirst.resolve();
  }

  /** The synthesis is done: what is buffered plays out, then the source ends. */
  end(): void {
    this.ended = true;
    this.settleFirst.resolve();
  }

  /** The synthesis failed: before any audio, firstAudio rejects; after, the prompt ends there. */
  fail(err: Error): void {
    if (this.ended) return;
    if (!this.hadAudio) this.settleFirst.reject(err);
    else this.failure = err;
    this.ended = true;
  }

  get exhausted(): boolean {
    return this.ended && this.buffered === 0;
  }

  readFrame(out: Frame): boolean {
    if (this.closed) return false;
    if (this.buffered === 0) {
      if (this.ended) return false;
      this.underruns++;
      out.fill(0);
      return true;
    }
    let n = 0;
    while (n < FRAME_SAMPLES && this.chunks.length) {
      const c = this.chunks[0]!;
      const take = Math.min(FRAME_SAMPLES - n, c.length - this.offset);
      // copied sample by sample: no subarray view allocated per frame on the 20 ms path
      for (let i = 0; i < take; i++) out[n + i] = c[this.offset + i]!;
      n += take;
      this.offset += take;
      this.buffered -= take;
      if (this.offset === c.length) {
        this.chunks.shift();
        this.offset = 0;
      }
    }
    if (n < FRAME_SAMPLES) out.fill(0, n);
    return true;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.chunks.length = 0;
    this.buffered = 0;
    if (!this.ended) this.stop.abort();
  }
}
