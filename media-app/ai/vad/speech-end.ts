/**
 * Where the caller's speech ended, to 5 ms, from the level of the audio the VAD judged. Silero decides
 * in 32 ms windows, and its probability trails the voice by a window or two (or drops at a stop
 * consonant's closure before its release): the end of its last voiced window is 0-180 ms from the end of
 * the voice, depending on where the windows fall. That date is what the turn's wait is counted from
 * (min_endpointing_delay_ms, `end_of_turn_wait_ms`); this one is the end of the last 5 ms block loud
 * enough to be the voice (within 35 dB of the loudest of the second before, and above a quiet line),
 * looked for from LOOKBACK_MS before the model's date up to the audio its verdict had judged.
 */
const BLOCK_MS = 5;
/** how far before the model's date the voice may have ended */
const LOOKBACK_MS = 320;
/** the level the voice is measured against: the loudest block of this long before the verdict */
const REFERENCE_MS = 1000;
/** a block this far under that level is not the voice any more (in power: 35 dB) */
const BELOW_REFERENCE = 10 ** (-35 / 10);
/** the blocks kept: a verdict is judged at most this long after its audio (the model's thread, a batch) */
const KEPT_MS = 4000;

export class SpeechEnd {
  private readonly blockSamples: number;
  private readonly power: Float64Array;
  /** whole blocks written */
  private blocks = 0;
  private sum = 0;
  private inBlock = 0;

  /** `quietPower`: the mean square under which a block is silence whatever the reference (a quiet line) */
  constructor(
    rate: number,
    private readonly quietPower: number,
  ) {
    this.blockSamples = Math.round((rate * BLOCK_MS) / 1000);
    this.power = new Float64Array(KEPT_MS / BLOCK_MS);
  }

  /** The next audio of the stream (the same the VAD is given, in the same order). */
  write(pcm: Int16Array): void {
    for (let i = 0; i < pcm.length; i++) {
      this.sum += pcm[i]! * pcm[i]!;
      if (++this.inBlock === this.blockSamples) {
        this.power[this.blocks % this.power.length] = this.sum / this.blockSamples;
        this.blocks++;
        this.sum = 0;
        this.inBlock = 0;
      }
    }
  }

  /**
   * The end of the voice (ms into the stream) for a stop the model dated `modelEndMs`, judged on the audio
   * up to `judgedMs`; `modelEndMs` itself when the blocks do not say (none loud enough, or no longer kept).
   */
  endOf(modelEndMs: number, judgedMs: number): number {
    const oldest = Math.max(0, this.blocks - this.power.length);
    const hi = Math.min(this.blocks, Math.floor(judgedMs / BLOCK_MS));
    const lo = Math.max(oldest, Math.floor((modelEndMs - LOOKBACK_MS) / BLOCK_MS));
    if (hi <= lo) return modelEndMs;
    let reference = 0;
    for (let b = Math.max(oldest, hi - REFERENCE_MS / BLOCK_MS); b < hi; b++) reference = Math.max(reference, this.power[b % this.power.length]!);
    const floor = Math.max(this.quietPower, reference * BELOW_REFERENCE);
    for (let b = hi - 1; b >= lo; b--) {
      const p = this.power[b % this.power.length]!;
      if (p > 0 && p >= floor) return (b + 1) * BLOCK_MS;
    }
    return modelEndMs;
  }
}
