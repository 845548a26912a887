/**
 * The worker-side player of one endpoint: a queue of play requests, each a list of sources played
 * back to back. Sources load in the background; until one is ready the player sends silence.
 */
import { FRAME_SAMPLES, type Frame, type FrameSource } from './dsp/frame';

export interface PlayResult {
  playbackSeconds: number;
  playbackMilliseconds: number;
  playbackLastOffsetPos: number;
  /** true when stopped early (stopPlayback, barge-in, destroy) */
  interrupted: boolean;
  /** when (epoch ms, the worker's clock) the request's first audio frame went out; absent when none did */
  firstFrameAt?: number;
  /** each text spoken in the request: its speech synthesis (for media-app's `tts synthesize` spans) */
  synthesized?: SynthesisReport[];
}

/** One speech synthesis of a play request: provider, whether the cache had it, when (epoch ms). */
export interface SynthesisReport {
  provider: string;
  cached: boolean;
  startedAt: number;
  /** the whole text synthesized (a streamed synthesis a stop cut short: when it was stopped) */
  endedAt: number;
  /** its first audio ready to play (a streamed synthesis: before endedAt; a file: endedAt) */
  firstAudioAt?: number;
  /** a streamed synthesis that failed after its first audio: its error code (the prompt stopped there) */
  error?: string;
}

interface Job {
  loaders: (() => Promise<FrameSource>)[];
  bargeIn: boolean;
  /** The source being played (or awaited). */
  index: number;
  current: FrameSource | null;
  /** Sources loaded ahead of `index` (the next one loads while the current one plays). */
  ready: Map<number, FrameSource>;
  /** Highest source index whose load has been started (-1: none). */
  requested: number;
  failed: Map<number, Error>;
  played: number;
  /** when the first frame was played (Date.now()), 0 before */
  firstAt: number;
  finished: boolean;
  resolve: (r: PlayResult) => void;
  reject: (e: Error) => void;
}

export class Player {
  private jobs: Job[] = [];

  get active(): boolean {
    return this.jobs.length > 0;
  }

  enqueue(loaders: (() => Promise<FrameSource>)[], bargeIn = false): Promise<PlayResult> {
    return new Promise((resolve, reject) => {
      const job: Job = { loaders, bargeIn, index: 0, current: null, ready: new Map(), requested: -1, failed: new Map(), played: 0, firstAt: 0, finished: false, resolve, reject };
      this.jobs.push(job);
      // load at once: the source is usually ready before the tick that plays it
      this.load(job, 0);
    });
  }

  /**
   * Fills the next frame and returns its rate, 0 when nothing is playing: `out` at 8 kHz (8000), or,
   * given `wide` (a wideband leg's 16 kHz frame) and a wideband source, `wide` (16000). A job resolves
   * in the tick that sends its last frame (not one tick later), and the next source of a job loads
   * while the current one plays, so back-to-back audio has no silent frame between files or between
   * play requests.
   */
  readFrame(out: Frame, wide: Int16Array | null = null): 0 | 8000 | 16000 {
    while (this.jobs.length) {
      const job = this.jobs[0]!;
      if (job.index >= job.loaders.length) {
        this.finish(job, false);
        continue;
      }
      if (!job.current) {
        const err = job.failed.get(job.index);
        if (err) {
          this.drop(job);
          job.reject(err);
          continue;
        }
        this.load(job, job.index);
        out.fill(0); // still loading: keep the stream going with silence
        return 8000;
      }
      const src = job.current;
      let rate: 8000 | 16000 = 8000;
      let got: boolean;
      if (wide && src.readWideFrame) {
        rate = 16000;
        got = src.readWideFrame(wide);
      } else got = src.readFrame(out);
      if (!got) {
        this.advance(job);
        continue;
      }
      if (job.played === 0) job.firstAt = Date.now();
      job.played += FRAME_SAMPLES;
      // the next source loads while this one plays (load's own test repeated here: a call per frame
      // that only returned still allocated in V8)
      if (job.current.exhausted) {
        this.advance(job);
        if (job.index >= job.loaders.length) this.finish(job, false);
      } else if (job.index + 1 > job.requested && job.index + 1 < job.loaders.length) this.load(job, job.index + 1);
      return rate;
    }
    return 0;
  }

  /** Starts loading source i of a job unless it was already asked for or is past the end. */
  private load(job: Job, i: number): void {
    // sources are asked for in order, once each: one comparison per frame on the hot path
    if (i >= job.loaders.length || i <= job.requested) return;
    job.requested = i;
    job.loaders[i]!().then(
      (src) => {
        if (job.finished || i < job.index) return src.close?.();
        if (i === job.index && !job.current) job.current = src;
        else job.ready.set(i, src);
      },
      (e: Error) => {
        if (!job.finished) job.failed.set(i, e);
      },
    );
  }

  /** On to the job's next source (already loaded, if it was ready in time). */
  private advance(job: Job): void {
    job.current?.close?.();
    job.index++;
    job.current = job.ready.get(job.index) ?? null;
    job.ready.delete(job.index);
  }

  private drop(job: Job): void {
    job.finished = true;
    const i = this.jobs.indexOf(job);
    if (i >= 0) this.jobs.splice(i, 1);
    job.current?.close?.();
    job.current = null;
    for (const src of job.ready.values()) src.close?.();
    job.ready.clear();
  }

  private finish(job: Job, interrupted: boolean): void {
    this.drop(job);
    const ms = Math.round((job.played * 1000) / 8000);
    const r: PlayResult = { playbackSeconds: Math.floor(ms / 1000), playbackMilliseconds: ms, playbackLastOffsetPos: job.played, interrupted };
    if (job.firstAt) r.firstFrameAt = job.firstAt;
    job.resolve(r);
  }

  /** Stops everything playing or queued (barge-in only stops jobs that allow it). */
  stop(bargeInOnly = false): void {
    for (const job of [...this.jobs]) if (!bargeInOnly || job.bargeIn) this.finish(job, true);
  }
}
