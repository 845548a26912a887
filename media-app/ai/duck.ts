/**
 * The agent silenced while the caller talks over it (docs/ai.md "Turn-taking", "Interruptions"):
 * caller speech over the agent that lasts `min_interruption_duration_ms` from its onset (the VAD's
 * start comes `startMs` after the onset) mutes what the caller hears of the agent (the call's media
 * state's `ducked`: silence is sent, the reply plays on underneath; a mute the flow or the API set
 * stays, as the state mutes the endpoint by the union of what each asker wants) until the words decide: a backchannel
 * releases it (the agent is heard again), other words cut the reply (barge-in) and release it.
 * Speech that ends with no words yet releases it `graceMs` later if nothing decided meanwhile.
 */
/** Sets the call's `ducked` (media-app/call/media-state.ts). */
export type SetDucked = (on: boolean) => Promise<void>;

export class Ducking {
  private timer: NodeJS.Timeout | null = null;
  private muted = false;

  constructor(
    private readonly setDucked: SetDucked,
    /** speech from its onset before the agent is silenced, ms (0: never) */
    private readonly minMs: number,
    /** when the VAD reports the speech's start after its onset, ms */
    private readonly startMs: number,
  ) {}

  /** The caller started speaking over the agent. */
  speechStarted(): void {
    if (this.minMs <= 0 || this.muted) return;
    this.clear();
    this.timer = setTimeout(() => this.mute(), Math.max(0, this.minMs - this.startMs));
  }

  /** The caller stopped: not sustained (no mute), or muted with no words yet (released after `graceMs`). */
  speechStopped(graceMs: number): void {
    this.clear();
    if (this.muted) this.timer = setTimeout(() => this.release(), graceMs);
  }

  /** The words decided (or the reply was cut, or the session ended): the agent is heard again. */
  release(): void {
    this.clear();
    if (!this.muted) return;
    this.muted = false;
    void this.setDucked(false).catch(() => undefined);
  }

  private mute(): void {
    this.timer = null;
    if (this.muted) return;
    this.muted = true;
    void this.setDucked(true).catch(() => undefined);
  }

  private clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
