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
import { sdpHoldMode, type Endpoint, type SdpHoldMode } from '../media-engine';

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

/** The variables whose read sets engine->media_timeout (the value stays as it was when none is set). */
const TIMEOUT_VARS = ['media_timeout', 'media_timeout_audio', 'rtp_timeout_sec'];

/**
 * The hold timeout a read sets (check_media_timeout_params): media_hold_timeout_audio when set, else
 * media_hold_timeout (ms); null when neither is set (the value stays as it was).
 */
export function mediaHoldTimeoutMs(vars: ReadonlyMap<string, string>): number | null {
  const v = vars.has('media_hold_timeout_audio') ? vars.get('media_hold_timeout_audio') : vars.get('media_hold_timeout');
  return v === undefined ? null : Math.max(0, atoi(v));
}

/**
 * One channel's watch: armed when its RTP is activated (answer, re-INVITE), gone with the channel. As
 * FreeSWITCH keeps it: the engine's media timeout and hold timeout (the last reads), the RTP session's
 * timeout in force, and whether the far end holds (CF_PROTO_HOLD).
 */
export class MediaTimeout {
  /** the RTP session's timeout in force (0: none) */
  private armedMs = 0;
  /** engine->media_timeout: the last read of the variables (0 included) */
  private engineMs = 0;
  /** engine->media_hold_timeout: set by a read of media_hold_timeout, else 10 × a non-zero media timeout */
  private holdMs = 0;
  /** the far end holds (its re-INVITE offered sendonly, inactive or 0.0.0.0) */
  private held = false;
  /** a watch was asked of the endpoint (so a timeout gone to 0 disarms it) */
  private watching = false;
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
   * The channel's RTP is activated (its answer) or activated again (a re-INVITE, `offer` its SDP): arms the
   * endpoint's watch for what `vars` ask now; 0 or nothing keeps the timeout it had, as FreeSWITCH does. An
   * armed watch starts its count again (activate_rtp's switch_rtp_reset_media_timer). First what the
   * re-INVITE's negotiation does: a far end that holds switches to the hold timeout
   * (switch_core_media_toggle_hold), one that resumes back to the media timeout, a recvonly one zeroes
   * both; then the read (check_media_timeout_params), which puts a non-zero media timeout in force.
   */
  activate(vars: ReadonlyMap<string, string>, offer: string | null = null): void {
    // what the re-INVITE's offer says of the far end, as switch_core_media_negotiate_sdp reads it
    this.negotiated(offer === null ? null : sdpHoldMode(offer));
    const hold = mediaHoldTimeoutMs(vars);
    if (hold !== null) this.holdMs = hold;
    const ms = mediaTimeoutMs(vars);
    if (TIMEOUT_VARS.some((k) => vars.has(k))) this.engineMs = ms;
    if (ms > 0) {
      this.armedMs = ms;
      if (!this.holdMs) this.holdMs = ms * 10;
    }
    if (this.closed || this.endpoint.destroyed || (this.armedMs === 0 && !this.watching)) return;
    this.watching = this.armedMs > 0;
    // a held leg is watched whatever its direction (the far end's sendonly leaves ours receive-only)
    this.endpoint.watchRx(this.armedMs, this.held).catch((e: unknown) => {
      // the leg ended meanwhile: its watch went with it; anything else is the engine's failure
      if (!this.closed && !this.endpoint.destroyed) this.failed(e instanceof Error ? e : new Error(String(e)));
    });
  }

  /** What the re-INVITE's offer changes before the read (switch_core_media_negotiate_sdp, toggle_hold). */
  private negotiated(mode: SdpHoldMode | null): void {
    if (mode === 'recvonly') {
      this.engineMs = this.holdMs = this.armedMs = 0;
    } else if (mode === 'holds' && !this.held) {
      this.held = true;
      if (this.holdMs) this.armedMs = this.holdMs;
    } else if (mode === 'sendrecv' && this.held) {
      this.held = false;
      if (this.holdMs) this.armedMs = this.engineMs;
    }
  }

  /** The channel ended: no more timeouts from it (the engine's watch goes with the endpoint). */
  close(): void {
    this.closed = true;
    this.endpoint.off('rxTimeout', this.onRx);
  }
}
