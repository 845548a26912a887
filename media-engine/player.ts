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
}

interface Job {
  loaders: (() => Promise<FrameSource>)[];
  bargeIn: boolean;
  index: number;
  current: FrameSource | null;
  loading: Promise<FrameSource> | null;
  played: number;
  error: Error | null;
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
      this.jobs.push({ loaders, bargeIn, index: 0, current: null, loading: null, played: 0, error: null, resolve, reject });
    });
  }

  /** Fills `out` with the next frame; false when nothing is playing. */
  readFrame(out: Frame): boolean {
    while (this.jobs.length) {
      const job = this.jobs[0];
      if (job.error) {
        this.jobs.shift();
        job.reject(job.error);
        continue;
      }
      if (job.current) {
        if (job.current.readFrame(out)) {
          job.played += FRAME_SAMPLES;
          return true;
        }
        job.current.close?.();
        job.current = null;
        job.index++;
      }
      if (job.index >= job.loaders.length) {
        this.finish(job, false);
        continue;
      }
      if (!job.loading) {
        job.loading = job.loaders[job.index]();
        job.loading.then(
          (src) => {
            if (this.jobs.includes(job)) job.current = src;
            else src.close?.();
            job.loading = null;
          },
          (err: Error) => {
            job.error = err;
            job.loading = null;
          },
        );
      }
      out.fill(0); // still loading: keep the stream going with silence
      return true;
    }
    return false;
  }

  private finish(job: Job, interrupted: boolean): void {
    const i = this.jobs.indexOf(job);
    if (i >= 0) this.jobs.splice(i, 1);
    job.current?.close?.();
    const ms = Math.round((job.played * 1000) / 8000);
    job.resolve({ playbackSeconds: Math.floor(ms / 1000), playbackMilliseconds: ms, playbackLastOffsetPos: job.played, interrupted });
  }

  /** Stops everything playing or queued (barge-in only stops jobs that allow it). */
  stop(bargeInOnly = false): void {
    for (const job of [...this.jobs]) if (!bargeInOnly || job.bargeIn) this.finish(job, true);
  }
}
