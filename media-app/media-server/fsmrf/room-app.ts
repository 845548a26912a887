/**
 * Whether a leg's channel runs the switch's `conference` application: from the moment a join is asked
 * (before its sendmsg goes) until the application completes (CHANNEL_EXECUTE_COMPLETE with Application
 * `conference` on the leg's channel connection). The switch runs a sendmsg'd application only after the
 * running one (FreeSWITCH with event-lock; our switch too: esl/README.md), so a prompt (playback, speak,
 * play_and_get_digits) sent meanwhile would play only once the leg had left the room: the music of a
 * member's hold would never be heard in it. Such a prompt is refused instead, and the refusal is read in
 * the same step as the prompt's send (FsmrfCallEndpoint: no await between the check and the command
 * on the channel socket), so a join and a prompt asked at once never both go ahead: a prompt asked after
 * the join is refused, a join asked after the prompt runs after its file, as on the switch. A join counts
 * from its asking until the switch starts its application (CHANNEL_EXECUTE), then until the application
 * completes; a join whose send fails before its application started counts down at once.
 */
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import { MediaBackendUnsupported } from '../port';
import { onChannelEvent } from './leg-socket';

export class RoomApp {
  /** joins asked whose application the switch has not started yet (its CHANNEL_EXECUTE) */
  private asked = 0;
  /** the conference applications started on the leg and not completed yet */
  private running = 0;
  /** stop listening for the applications' start and completion, set at the first join */
  private offs: (() => void)[] | null = null;

  constructor(private readonly fs: FsEndpoint) {}

  /**
   * A join: `send` (fsmrf's join, resolved at the member's add-member). The leg counts as in the room
   * from now until its application completes; a join whose send fails before the switch started its
   * application (refused, the channel socket gone) counts down at once, else the leg would refuse every
   * later prompt until it hung up.
   */
  async join<T>(send: () => Promise<T>): Promise<T> {
    this.offs ??= [
      onChannelEvent(this.fs, 'CHANNEL_EXECUTE', (evt) => {
        if (evt.getHeader('Application') !== 'conference') return;
        if (this.asked > 0) this.asked--;
        this.running++;
      }),
      onChannelEvent(this.fs, 'CHANNEL_EXECUTE_COMPLETE', (evt) => {
        if (evt.getHeader('Application') === 'conference' && this.running > 0) this.running--;
      }),
    ].filter((off): off is () => void => off !== null);
    this.asked++;
    try {
      return await send();
    } catch (err) {
      // its application never started: nothing will complete it (one asked after it may have started)
      if (this.asked > 0) this.asked--;
      throw err;
    }
  }

  /** Why a prompt sent to the leg now would not be played, or null. */
  refusal(): MediaBackendUnsupported | null {
    if (this.asked === 0 && this.running === 0) return null;
    return new MediaBackendUnsupported(
      'fsmrf',
      "a prompt or music to a leg in a switch room (the switch would play it only after the leg left the room; FreeSWITCH's conference <room> hold <member> is the way there)",
    );
  }

  /** The leg ended: nothing more is watched. */
  close(): void {
    for (const off of this.offs ?? []) off();
    this.offs = null;
  }
}
