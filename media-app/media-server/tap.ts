/**
 * An audio tap of a leg (README.md beside, "Audio taps"): what media-app's callers of forkAudioStart
 * use of a fork. The embedded engine's AudioFork satisfies it unchanged (`tsc --noEmit` proves it:
 * its Endpoint is a CallEndpoint); the fsmrf backend's FsmrfFork (fsmrf/fork-tap.ts) is the switch's
 * mod_audio_fork over a WebSocket to media-app.
 */
import type { ForkStats, InjectRate } from '../../media-engine';

export interface MediaFork {
  /** the frames' sample rate (8000 or 16000), fixed for the life of the fork */
  readonly rate: number;
  /** Plays 16-bit mono samples (any length, at `rate`) back into the call. */
  inject(samples: Int16Array, rate?: InjectRate): void;
  /** Drops the injected audio not played yet. */
  clearInjected(): Promise<void>;
  /** When the next injection that starts goes out (a fork started with `reportStarts`). */
  nextStart(timeoutMs: number): Promise<number | null>;
  /** Ends the fork; its counters (null when it had ended already). */
  stop(): Promise<ForkStats | null>;
  /**
   * Resolves with why the fork ended by itself (a backend whose fork runs over a connection of its own:
   * the connection dropped). Absent where a fork only ends with its leg (the engine's).
   */
  readonly ended?: Promise<string>;
}
