/**
 * A drift-corrected 20 ms clock: tick n is due at start + n * 20 ms on the monotonic clock, so
 * timer lateness never accumulates. After a stall it catches up a few ticks (keeping RTP timestamps
 * and wall time in step); after a long stall it resynchronises instead of bursting.
 */

export interface ClockStats {
  ticks: number;
  /** lateness of each tick's start vs its due time, ms (a ring of the last 3000) */
  lateness: Float64Array;
  resyncs: number;
}

export class TickClock {
  private start = 0;
  private n = 0;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  readonly stats: ClockStats = { ticks: 0, lateness: new Float64Array(3000), resyncs: 0 };

  constructor(
    /** `index`: the tick's number since start (1, 2, ...); the `skippedTicks` before it were never run */
    private readonly onTick: (now: number, skippedTicks: number, index: number) => void,
    private readonly periodMs = 20,
    private readonly maxCatchUp = 5,
  ) {}

  get isRunning(): boolean {
    return this.running;
  }

  /** The index the next tick will have (between ticks). */
  get nextIndex(): number {
    return this.n + 1;
  }

  startClock(): void {
    if (this.running) return;
    this.running = true;
    this.start = performance.now();
    this.n = 0;
    this.schedule();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (!this.running) return;
    const due = this.start + (this.n + 1) * this.periodMs;
    const wait = Math.max(0, due - performance.now());
    this.timer = setTimeout(this.fire, wait);
  }

  private fire = (): void => {
    this.timer = null;
    if (!this.running) return;
    let now = performance.now();
    let caught = 0;
    let skipped = 0;
    while (this.running && now >= this.start + (this.n + 1) * this.periodMs) {
      const due = this.start + (this.n + 1) * this.periodMs;
      if (now - due > this.periodMs * this.maxCatchUp * 2) {
        // stalled for long: skip the missed ticks rather than bursting them
        const target = Math.floor((now - this.start) / this.periodMs) - 1;
        skipped += target - this.n;
        this.n = target;
        this.stats.resyncs++;
        continue;
      }
      this.stats.lateness[this.stats.ticks % this.stats.lateness.length] = now - due;
      this.stats.ticks++;
      this.n++;
      try {
        this.onTick(Date.now(), skipped, this.n);
        skipped = 0;
      } catch (e) {
        // a broken leg must never stop the clock for the others
        process.emitWarning(`media tick failed: ${(e as Error).stack ?? String(e)}`);
      }
      if (++caught >= this.maxCatchUp) break;
      now = performance.now();
    }
    this.schedule();
  };
}
