/**
 * Virtual time for the simulator: sleeps are timers on a queue, and time jumps straight to the next
 * one once nothing else can happen — no promise left to settle and no real I/O (HTTP) in flight.
 */
import { abortError, type FlowClock } from '../../kit/clock';

interface Timer {
  at: number;
  seq: number;
  fire: () => void;
  cancelled: boolean;
}

/** real_time_limit: the simulation took longer than the real time it was given (a bounded job). */
export type RunOutcome = 'done' | 'stalled' | 'time_limit' | 'real_time_limit';

/** Lets pending promise chains run; several turns because I/O callbacks can queue more work. */
async function drain(): Promise<void> {
  for (let i = 0; i < 4; i++) await new Promise<void>((r) => setImmediate(r));
}

export class VirtualClock implements FlowClock {
  private elapsed = 0;
  private seq = 0;
  private readonly timers: Timer[] = [];
  private inflight = 0;
  private wake: (() => void) | null = null;

  constructor(readonly base: number) {}

  now(): number {
    return this.base + this.elapsed;
  }

  /** Milliseconds since the simulation began. */
  get elapsedMs(): number {
    return this.elapsed;
  }

  get realWorkInFlight(): number {
    return this.inflight;
  }

  /** Runs fn after delay virtual ms. */
  schedule(delay: number, fn: () => void): { cancel(): void } {
    const t: Timer = { at: this.elapsed + Math.max(0, delay), seq: this.seq++, fire: fn, cancelled: false };
    this.timers.push(t);
    return { cancel: () => void (t.cancelled = true) };
  }

  /** Runs fn at an absolute offset from the start. */
  scheduleAt(at: number, fn: () => void): void {
    this.schedule(at - this.elapsed, fn);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const onAbort = () => {
        timer.cancel();
        reject(abortError(signal));
      };
      const timer = this.schedule(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  track<T>(p: Promise<T>): Promise<T> {
    this.inflight++;
    const done = () => {
      this.inflight--;
      this.wake?.();
    };
    p.then(done, done);
    return p;
  }

  /**
   * Advances time until `until()` holds, nothing is left to run, maxMs is reached, or (when given)
   * the real clock passes realDeadline (epoch ms).
   */
  async run(until: () => boolean, maxMs: number, realDeadline = Infinity): Promise<RunOutcome> {
    for (;;) {
      await drain();
      if (until()) return 'done';
      if (Date.now() > realDeadline) return 'real_time_limit';
      if (this.inflight > 0) {
        await new Promise<void>((r) => {
          this.wake = r;
          // Real work can settle without calling wake (a rejection we did not see): poll as well.
          setTimeout(r, 50).unref();
        });
        this.wake = null;
        continue;
      }
      const next = this.popNext();
      if (!next) return 'stalled';
      if (next.at > maxMs) {
        this.timers.push(next);
        return 'time_limit';
      }
      this.elapsed = next.at;
      next.fire();
    }
  }

  private popNext(): Timer | undefined {
    let best = -1;
    for (let i = 0; i < this.timers.length; i++) {
      const t = this.timers[i]!;
      if (t.cancelled) continue;
      const b = best >= 0 ? this.timers[best]! : undefined;
      if (!b || t.at < b.at || (t.at === b.at && t.seq < b.seq)) best = i;
    }
    if (best < 0) {
      this.timers.length = 0;
      return undefined;
    }
    const [t] = this.timers.splice(best, 1);
    // Drop cancelled timers now and then so the queue stays short.
    if (this.timers.length > 256) {
      const live = this.timers.filter((x) => !x.cancelled);
      this.timers.length = 0;
      this.timers.push(...live);
    }
    return t;
  }
}
