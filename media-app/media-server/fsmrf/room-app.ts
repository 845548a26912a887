/**
 * Whether a leg's channel runs the switch's `conference` application: from the moment a join is asked
 * (before its sendmsg goes) until the application completes (CHANNEL_EXECUTE_COMPLETE with Application
 * `conference` on the leg's channel connection). The switch runs a sendmsg'd application only after the
 * running one (FreeSWITCH with event-lock; our switch too: esl/README.md), so a prompt (playback, speak,
 * play_and_get_digits) sent meanwhile would play only once the leg had left the room: the music of a
 * member's hold would never be heard in it. Such a prompt is refused instead, and the refusal is read in
 * the same step as the prompt's send (FsmrfCallEndpoint: no await between the check and the command
 * on the channel socket), so a join and a prompt asked at once never both go ahead: a prompt asked after
 * the join is refused, a join asked after the prompt runs after its file, as on the switch.
 */
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import { MediaBackendUnsupported } from '../port';
import { onChannelEvent } from './leg-socket';

export class RoomApp {
  /** the conference applications asked for and not completed yet */
  private running = 0;
  /** the listener for their completion, set at the first join */
  private off: (() => void) | null = null;

  constructor(private readonly fs: FsEndpoint) {}

  /** A join is about to be sent: the leg counts as in the room from now until its application completes. */
  asked(): void {
    this.off ??= onChannelEvent(this.fs, 'CHANNEL_EXECUTE_COMPLETE', (evt) => {
      if (evt.getHeader('Application') === 'conference' && this.running > 0) this.running--;
    });
    this.running++;
  }

  /** Why a prompt sent to the leg now would not be played, or null. */
  refusal(): MediaBackendUnsupported | null {
    if (this.running === 0) return null;
    return new MediaBackendUnsupported(
      'fsmrf',
      "a prompt or music to a leg in a switch room (the switch would play it only after the leg left the room; FreeSWITCH's conference <room> hold <member> is the way there)",
    );
  }

  /** The leg ended: nothing more is watched. */
  close(): void {
    this.off?.();
    this.off = null;
  }
}
