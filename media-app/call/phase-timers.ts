/**
 * Timers owned by the phase of a call that armed them (docs/architecture.md "Time and faults"). A timer is
 * armed in the owner's current phase and is cleared when that phase ends, by construction: the owner
 * moves its phase through `enter()`, which clears every timer of the phase it leaves, so a phase's
 * timer (the dial timeout of a ringing call) cannot outlive it (issue 52: every answered call with an
 * outgoing leg was hung up when its dial timeout fired). `end()` clears them all and arms nothing more.
 *
 * The timer functions are injected (`TimerHost`), so the phase rules are tested on a virtual clock.
 */

/** setTimeout / clearTimeout, or a virtual clock's. */
export interface TimerHost {
  set(ms: number, fn: () => void): unknown;
  clear(handle: unknown): void;
}

export const realTimers: TimerHost = {
  set(ms, fn) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return t;
  },
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** A timer of a phase: cancelled by its phase's end, or earlier by its owner. */
export interface PhaseTimer {
  cancel(): void;
}

export class PhaseTimers<P extends string> {
  private current: P | null;
  private readonly armed = new Map<object, unknown>();

  constructor(
    initial: P,
    private readonly host: TimerHost = realTimers,
  ) {
    this.current = initial;
  }

  /** The phase timers are armed in now; null once ended. */
  get phase(): P | null {
    return this.current;
  }

  /** How many timers are armed (for tests and the session's own checks). */
  get size(): number {
    return this.armed.size;
  }

  /** Runs fn after ms unless the current phase ends first. After end(): nothing is armed. */
  after(ms: number, fn: () => void): PhaseTimer {
    const key = {};
    const cancel = () => {
      const h = this.armed.get(key);
      if (h === undefined) return;
      this.armed.delete(key);
      this.host.clear(h);
    };
    if (this.current === null) return { cancel };
    this.armed.set(
      key,
      this.host.set(ms, () => {
        this.armed.delete(key);
        fn();
      }),
    );
    return { cancel };
  }

  /** Moves to `next`: the timers of the phase left are cleared (entering the same phase keeps them). */
  enter(next: P): void {
    if (this.current === null || this.current === next) return;
    this.clearAll();
    this.current = next;
  }

  /** The owner's life ended: every timer is cleared and none is armed again. */
  end(): void {
    this.clearAll();
    this.current = null;
  }

  private clearAll(): void {
    for (const h of this.armed.values()) this.host.clear(h);
    this.armed.clear();
  }
}
