/**
 * The renewal of a worker's run leases (worker.ts): one timer, armed while the worker carries a run,
 * every `periodMs`; each firing awaits `renewOnce` (which logs its own failures and never throws) and
 * then arms the next one if the worker still carries runs. At most one timer is ever armed and at most
 * one renewal is in flight, whatever order carry (ensure) and drop (stop) come in, during a renewal too.
 */
export interface RenewalTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const realRenewalTimers: RenewalTimers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
};

export class LeaseRenewal {
  private timer: unknown = null;
  /** a renewal is in flight: the next timer is armed when it ends, not beside it */
  private renewing = false;
  /** the worker carries a run */
  private wanted = false;

  constructor(
    private readonly periodMs: number,
    private readonly renewOnce: () => Promise<void>,
    private readonly timers: RenewalTimers = realRenewalTimers,
  ) {}

  /** The worker carries a run: renew from now on (arms the timer unless one is armed). */
  ensure(): void {
    this.wanted = true;
    if (!this.timer && !this.renewing) this.arm();
  }

  /** The worker carries no run (or closes): no more renewals. */
  stop(): void {
    this.wanted = false;
    if (this.timer) this.timers.clear(this.timer);
    this.timer = null;
  }

  private arm(): void {
    this.timer = this.timers.set(() => void this.fire(), this.periodMs);
  }

  private async fire(): Promise<void> {
    this.timer = null;
    this.renewing = true;
    try {
      await this.renewOnce();
    } finally {
      this.renewing = false;
    }
    if (this.wanted && !this.timer) this.arm();
  }
}
