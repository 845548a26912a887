// A virtual clock for timer owners that take a TimerHost (media-app/call/phase-timers.ts) and now():
// timers fire only when the test moves time on, in the order they fall due.
import type { TimerHost } from '../../media-app/call/phase-timers';
import { EventEmitter } from 'node:events';

export interface VirtualTimers extends TimerHost {
  now(): number;
  /** Moves time on by ms, firing each timer that falls due (at its own time) on the way. */
  advance(ms: number): void;
  /** How many timers are armed. */
  pending(): number;
}

export function virtualTimers(start = 0): VirtualTimers {
  let now = start;
  let seq = 0;
  const due = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    set(ms, fn) {
      due.set(++seq, { at: now + Math.max(0, ms), fn });
      return seq;
    },
    clear: (h) => void due.delete(h as number),
    advance(ms) {
      const end = now + ms;
      for (;;) {
        const next = [...due.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
        if (!next) break;
        due.delete(next[0]);
        now = next[1].at;
        next[1].fn();
      }
      now = end;
    },
    pending: () => due.size,
  };
}

/**
 * Virtual timers that also say when one is armed: `armings` emits 'set' with its delay (a test waits for
 * the arming it expects, then moves `clock` on past it). `timers` is what an owner of LinkTimers takes.
 */
export function watchedTimers(start = 0): {
  clock: VirtualTimers;
  armings: EventEmitter;
  timers: { set: (ms: number, fn: () => void) => unknown; clear: (h: unknown) => void };
} {
  const clock = virtualTimers(start);
  const armings = new EventEmitter();
  const timers = {
    set: (ms: number, fn: () => void) => {
      const h = clock.set(ms, fn);
      armings.emit('set', ms);
      return h;
    },
    clear: (h: unknown) => clock.clear(h),
  };
  return { clock, armings, timers };
}
