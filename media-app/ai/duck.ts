/**
 * The agent silenced while the caller talks over it (docs/ai.md "Turn-taking", "Interruptions"):
 * caller speech over the agent that lasts `min_interruption_duration_ms` from its onset (the VAD's
 * start comes `startMs` after the onset) mutes what the caller hears of the agent (the call's media
 * state's `ducked`: silence is sent, the reply plays on underneath; a mute the flow or the API set
 * stays, as the state mutes the endpoint by the union of what each asker wants) until the words decide: a backchannel
 * releases it (the agent is heard again), other words cut the reply (barge-in) and release it.
 * Speech that ends with no words yet releases it `graceMs` later if nothing decided meanwhile.
 */
import { PhaseTimers, type PhaseTimer } from '../call/phase-timers';
import { realVoiceClock, type VoiceClock } from './voice-moves';

/** Sets the call's `ducked` (media-app/call/media-state.ts). */
export type SetDucked = (on: boolean) => Promise<void>;

/** heard: the agent is heard; muted: silenced at the caller. Each timer is its phase's: the mute's by heard, the release's by muted. */
type DuckPhase = 'heard' | 'muted' | 'ended';

export class Ducking {
  private readonly timers: PhaseTimers<DuckPhase>;
  private timer: PhaseTimer | null = null;

  constructor(
    private readonly setDucked: SetDucked,
    /** speech from its onset before the agent is silenced, ms (0: never) */
    private readonly minMs: number,
    /** when the VAD reports the speech's start after its onset, ms */
    private readonly startMs: number,
    clock: VoiceClock = realVoiceClock,
  ) {
    this.timers = new PhaseTimers<DuckPhase>('heard', clock);
  }

  private get muted(): boolean {
    return this.timers.phase === 'muted';
  }

  /** The caller started speaking over the agent. */
  speechStarted(): void {
    if (this.minMs <= 0 || this.timers.phase !== 'heard') return;
    this.clear();
    this.timer = this.timers.after(Math.max(0, this.minMs - this.startMs), () => this.mute());
  }

  /** The caller stopped: not sustained (no mute), or muted with no words yet (released after `graceMs`). */
  speechStopped(graceMs: number): void {
    this.clear();
    if (this.muted) this.timer = this.timers.after(graceMs, () => this.release());
  }

  /** The words decided (or the reply was cut, or the session ended): the agent is heard again. */
  release(): void {
    this.clear();
    if (!this.muted) return;
    this.timers.enter('heard');
    void this.setDucked(false).catch(() => undefined);
  }

  /** The session ended: released, and no timer is armed again. */
  end(): void {
    this.release();
    this.timers.end();
  }

  private mute(): void {
    this.timer = null;
    if (this.timers.phase !== 'heard') return;
    this.timers.enter('muted');
    void this.setDucked(true).catch(() => undefined);
  }

  private clear(): void {
    this.timer?.cancel();
    this.timer = null;
  }
}
