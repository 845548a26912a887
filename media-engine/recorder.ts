/**
 * The worker-side recorder of one endpoint (or of a conference mix): both directions mixed into one
 * WAV, optionally separate -in/-out files, and the stop conditions of recording_start:
 * end_of_silence (seconds of caller silence), end_of_key (a DTMF digit) and duration (seconds).
 *
 * Its rate is the leg's when it starts: 8 kHz, or 16 kHz on a G.722 / Opus leg (a wideband call keeps
 * its band in the file). Should the leg turn narrowband mid-recording (a re-INVITE to G.711), its 8 kHz
 * frames are resampled up (`writeNarrow`), so the file keeps one rate.
 */
import { Resampler } from './codecs';
import { WavSink } from './worker/wav-sink';

export interface RecordOptions {
  /** stop after this many seconds of silence from the caller (0 = off) */
  end_of_silence?: number;
  /** stop when one of these DTMF digits arrives ('' = off) */
  end_of_key?: string;
  /** stop after this many seconds (0 = off) */
  duration?: number;
  /** also write `<name>-in.wav` and `<name>-out.wav` */
  separate?: boolean;
  /** mean |sample| below which a frame counts as silence (default 200 ≈ -44 dBFS) */
  silenceThreshold?: number;
}

export type RecordStopReason = 'end_of_silence' | 'end_of_key' | 'duration' | 'stopped' | 'hangup';

export interface RecordFile {
  path: string;
  direction: 'in' | 'out' | '';
  duration: number;
  peaks: number[];
}

export interface RecordResult {
  path: string;
  reason: RecordStopReason;
  terminatorUsed: string | null;
  recordSeconds: number;
  recordMilliseconds: number;
  /** samples per second of the file (the leg's rate when it started) */
  rate: number;
  files: RecordFile[];
}

function sidePath(p: string, side: 'in' | 'out'): string {
  return /\.wav$/i.test(p) ? p.replace(/\.wav$/i, `-${side}.wav`) : `${p}-${side}`;
}

export class Recorder {
  private readonly mixed: WavSink;
  private readonly inSink: WavSink | null;
  private readonly outSink: WavSink | null;
  /** samples per 20 ms at `rate` */
  private readonly frame: number;
  private readonly silence: Int16Array;
  /** writeNarrow's resamplers and frames (made on first use) */
  private up: { in: Resampler; out: Resampler; inFrame: Int16Array; outFrame: Int16Array } | null = null;
  private silentFrames = 0;
  private frames = 0;
  private done = false;
  private resolveFn!: (r: RecordResult) => void;
  readonly result: Promise<RecordResult>;

  constructor(
    readonly path: string,
    private readonly opts: RecordOptions = {},
    readonly rate = 8000,
  ) {
    this.frame = rate / 50;
    this.silence = new Int16Array(this.frame);
    this.mixed = new WavSink(path, rate);
    this.inSink = opts.separate ? new WavSink(sidePath(path, 'in'), rate) : null;
    this.outSink = opts.separate ? new WavSink(sidePath(path, 'out'), rate) : null;
    this.result = new Promise((r) => (this.resolveFn = r));
  }

  get finished(): boolean {
    return this.done;
  }

  /** One tick at 8 kHz into a recorder of a higher rate: both directions resampled up, then written. */
  writeNarrow(input: Int16Array | null, output: Int16Array | null): void {
    if (this.done) return;
    if (this.rate === 8000) return this.write(input, output);
    const u = (this.up ??= { in: new Resampler(8000, this.rate), out: new Resampler(8000, this.rate), inFrame: new Int16Array(this.frame), outFrame: new Int16Array(this.frame) });
    if (input) u.in.process(input, u.inFrame, 160);
    if (output) u.out.process(output, u.outFrame, 160);
    this.write(input ? u.inFrame : null, output ? u.outFrame : null);
  }

  /** One tick at the recorder's rate: `input` is what the caller said, `output` what was sent to the caller (either may be null). */
  write(input: Int16Array | null, output: Int16Array | null): void {
    if (this.done) return;
    const n = this.frame;
    // mixed straight into the file's buffer, with the caller's level for end_of_silence
    const sum = this.mixed.writeMixed(input, output, n);
    if (this.inSink) this.inSink.write(input ?? this.silence);
    if (this.outSink) this.outSink.write(output ?? this.silence);
    this.frames++;
    const eos = this.opts.end_of_silence ?? 0;
    if (eos > 0) {
      this.silentFrames = sum / n < (this.opts.silenceThreshold ?? 200) ? this.silentFrames + 1 : 0;
      if (this.silentFrames >= eos * 50) return this.stop('end_of_silence');
    }
    const dur = this.opts.duration ?? 0;
    if (dur > 0 && this.frames >= dur * 50) this.stop('duration');
  }

  /** Returns true when the digit ended the recording. */
  onDtmf(digit: string): boolean {
    if (this.done || !this.opts.end_of_key || !this.opts.end_of_key.includes(digit)) return false;
    this.stop('end_of_key', digit);
    return true;
  }

  stop(reason: RecordStopReason, terminator: string | null = null): void {
    if (this.done) return;
    this.done = true;
    if (this.up) {
      this.up.in.close();
      this.up.out.close();
      this.up = null;
    }
    const files: RecordFile[] = [{ path: this.path, direction: '', ...this.mixed.close() }];
    if (this.inSink) files.push({ path: this.inSink.path, direction: 'in', ...this.inSink.close() });
    if (this.outSink) files.push({ path: this.outSink.path, direction: 'out', ...this.outSink.close() });
    const ms = this.frames * 20;
    this.resolveFn({
      path: this.path,
      reason,
      terminatorUsed: terminator,
      recordSeconds: Math.floor(ms / 1000),
      recordMilliseconds: ms,
      rate: this.rate,
      files,
    });
  }
}
