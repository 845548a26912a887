/**
 * Dial plan rules an outplan adds to its tries (pure, so routes, runner and tests share them):
 * dialling windows in a time zone, and what a finished attempt was (its outcome) with the try
 * interval that outcome asks for. docs/campaigns.md says why each choice.
 */
import type { HangupReason } from '../calls/model';

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Dialling is allowed on `days` from `start` (inclusive) to `end` (exclusive), local "HH:MM" in the outplan's zone. */
export interface DialWindow {
  days: Weekday[];
  start: string;
  end: string;
}

export const HHMM = /^([01]\d|2[0-3]):[0-5]\d$|^24:00$/;

/** Minutes since midnight of "HH:MM" ("24:00" = 1440). */
export function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
}

/** Whether `tz` is a time zone this runtime knows (IANA name such as Europe/Paris, or UTC). */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The weekday and minute of the day `at` is in `tz`. */
export function localTime(at: Date, tz: string): { day: Weekday; minute: number } {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formatters.set(tz, f);
  }
  const parts = Object.fromEntries(f.formatToParts(at).map((p) => [p.type, p.value]));
  const day = String(parts.weekday).slice(0, 3).toLowerCase() as Weekday;
  return { day, minute: Number(parts.hour) * 60 + Number(parts.minute) };
}

/** True when `at` falls in one of the windows; no windows means any time. */
export function windowOpen(windows: DialWindow[], tz: string, at: Date): boolean {
  if (windows.length === 0) return true;
  const { day, minute } = localTime(at, tz);
  return windows.some((w) => w.days.includes(day) && minute >= minutesOf(w.start) && minute < minutesOf(w.end));
}

/**
 * What an attempt ended with, recorded as the campaigncall's `result_reason`. Call attempts:
 * answered (normal hangup after answer), busy, noanswer (no answer in dial_timeout, 408/480/603),
 * failed (any other failure, including a call cancelled by the platform), machine (hung up by AMD);
 * undialable: the destination could not be dialled at all. Flow attempts: finished or error.
 */
export const OUTCOMES = ['', 'answered', 'busy', 'noanswer', 'failed', 'machine', 'undialable', 'finished', 'error'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export function outcomeOfHangup(reason: HangupReason): Outcome {
  switch (reason) {
    case 'normal':
      return 'answered';
    case 'busy':
      return 'busy';
    case 'noanswer':
    case 'timeout':
      return 'noanswer';
    case 'amd':
      return 'machine';
    default:
      return 'failed';
  }
}

export interface OutcomeIntervals {
  try_interval: number;
  try_interval_busy: number | null;
  try_interval_noanswer: number | null;
  try_interval_failed: number | null;
  try_interval_machine: number | null;
}

/** Milliseconds before a target whose attempt ended with `o` is dialled again (null = the plain try_interval). */
export function retryDelay(p: OutcomeIntervals, o: Outcome): number {
  const own =
    o === 'busy' ? p.try_interval_busy : o === 'noanswer' ? p.try_interval_noanswer : o === 'machine' ? p.try_interval_machine : o === 'failed' || o === 'undialable' ? p.try_interval_failed : null;
  return own ?? p.try_interval;
}
