/**
 * A channel's media timeout, as FreeSWITCH 1.10 reads it (switch_core_media.c check_media_timeout_params
 * and the deprecated rtp_timeout_sec): the channel variables `media_timeout` (ms; `media_timeout_audio`
 * over it when set) and `rtp_timeout_sec` (s) arm the channel's receive watch, and a channel whose far end
 * sends no RTP for it is hung up with MEDIA_TIMEOUT (switch_rtp.c). The watch is the engine's
 * (media-engine/worker/rx-watch.ts) on the channel's endpoint: it counts RTP and RTCP, does not watch a
 * leg on hold or only listening, and dies with the endpoint.
 *
 * Read where FreeSWITCH reads them, never when they are set: when the channel's RTP is activated (its
 * answer: switch_core_media_activate_rtp) and again at a re-INVITE (activate_rtp on a ready RTP session).
 * A uuid_setvar / set mid-call is only a variable until then. A read that finds 0 or nothing leaves the
 * watch as it was (check_media_timeout_params sets the RTP session's timeout only when non-zero); each
 * activation starts the count of silence again (switch_rtp_reset_media_timer).
 * Simplified: FreeSWITCH re-reads rtp_timeout_sec at a re-INVITE only when the codec changes; ours at each.
 * The platform sets `media_timeout` on the INVITE (the X-Media-Timeout header, which the mrf dialplan,
 * freeswitch/dialplan/mrf.xml, sets before its answer; the SIP face does the same: sip-face.ts).
 */
import type { Endpoint } from '../media-engine';

/** C's atoi on a variable's value: the leading integer, 0 when none. */
function atoi(v: string | undefined): number {
  const n = Number.parseInt(v ?? '', 10);
  return Number.isFinite(n) ? n : 0;
}

/**
 * The ms of silence the variables ask for, 0 when off: media_timeout_audio when set, else media_timeout
 * (ms), and rtp_timeout_sec (s); FreeSWITCH arms both (a timer and a count of missed packets), so the
 * shorter one ends the channel.
 */
export function mediaTimeoutMs(vars: ReadonlyMap<string, string>): number {
  const ms = Math.max(0, atoi(vars.has('media_timeout_audio') ? vars.get('media_timeout_audio') : vars.get('media_timeout')));
  const sec = Math.max(0, atoi(vars.get('rtp_timeout_sec')));
  const both = [ms, sec * 1000].filter((n) => n > 0);
  return both.length ? Math.min(...both) : 0;
}

/** One channel's watch: armed when its RTP is activated (answer, re-INVITE), gone with the channel. */
export class MediaTimeout {
  private armedMs = 0;
  private closed = false;
  private readonly onRx = () => {
    if (!this.closed && this.armedMs > 0) this.timedOut();
  };

  constructor(
    private readonly endpoint: Endpoint,
    private readonly timedOut: () => void,
    private readonly failed: (err: Error) => void,
  ) {
    endpoint.on('rxTimeout', this.onRx);
  }

  /**
   * The channel's RTP is activated (its answer) or activated again (a re-INVITE): arms the endpoint's
   * watch for what `vars` ask now; 0 or nothing keeps the timeout it had, as FreeSWITCH does. An armed
   * watch starts its count again (activate_rtp's switch_rtp_reset_media_timer).
   */
  activate(vars: ReadonlyMap<string, string>): void {
    const ms = mediaTimeoutMs(vars);
    if (ms > 0) this.armedMs = ms;
    if (this.closed || this.armedMs === 0 || this.endpoint.destroyed) return;
    this.endpoint.watchRx(this.armedMs).catch((e: unknown) => {
      // the leg ended meanwhile: its watch went with it; anything else is the engine's failure
      if (!this.closed && !this.endpoint.destroyed) this.failed(e instanceof Error ? e : new Error(String(e)));
    });
  }

  /** The channel ended: no more timeouts from it (the engine's watch goes with the endpoint). */
  close(): void {
    this.closed = true;
    this.endpoint.off('rxTimeout', this.onRx);
  }
}
