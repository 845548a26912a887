// The timers the long-call tests make small (each by its own configuration) and how long a call is
// held: past three times the longest timer the path meets, so a timer armed at the dial (or at the
// ring) and left running after the answer has fired by then, however late the answer came.

/** CALL_DIAL_TIMEOUT_MS of the test platforms (media-app/kit/config.ts; its minimum is 1000). */
export const DIAL_TIMEOUT_MS = 1500;

/** The env of a long-call platform: the dial timeout small. */
export const LONG_CALL_ENV: Record<string, string> = { CALL_DIAL_TIMEOUT_MS: String(DIAL_TIMEOUT_MS) };

/** How long to hold an answered call whose longest timer is `longestTimerMs` (3× it, and a margin). */
export const holdPast = (longestTimerMs: number) => 3 * longestTimerMs + 500;
