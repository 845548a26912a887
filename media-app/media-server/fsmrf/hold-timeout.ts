/**
 * A leg's media timeout across holds on the switch (README.md beside, "Hold on fsmrf"). FreeSWITCH reads
 * `media_timeout` again when a re-INVITE activates the RTP (switch_core_media_activate_rtp →
 * check_media_timeout_params, after switch_core_media_negotiate_sdp): a recvonly offer (the party we
 * hold) zeroes the RTP session's timeout in the negotiation, and that read arms it again straight after,
 * so a held party that sends no RTP would be hung up with MEDIA_TIMEOUT; a sendonly or inactive offer
 * (the party holds) switches to media_hold_timeout in switch_core_media_toggle_hold, which the same read
 * then replaces with media_timeout. A variable that reads 0 leaves the RTP session's timeout as the
 * negotiation set it. So before the switch gets an SDP of the party that is not sendrecv, `media_timeout`
 * is set to 0 on the channel (our hold: no timeout; the party's hold: media_hold_timeout, 10 × the media
 * timeout unless set, as FreeSWITCH means it), and back to the leg's timeout before a sendrecv one (the
 * unhold's re-INVITE arms it again and starts its count over). Only on a leg made with a timeout.
 * `before` runs inside the leg's modify, which runs one at a time per leg (endpoint.ts): `current` and the
 * switch's SDP always belong to the same re-INVITE.
 */
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import { sdpHoldMode } from '../../../media-engine';
import { apiBody, replyText } from './esl-arg';

export class HoldTimeout {
  /** the channel's media_timeout as last set (the INVITE's X-Media-Timeout at first) */
  private current: number;

  /** `run`: the leg's operations under its channel socket (leg-socket.ts). */
  constructor(
    private readonly fs: FsEndpoint,
    private readonly mediaTimeoutMs: number,
    private readonly run: <T>(operation: string, op: () => Promise<T>) => Promise<T>,
  ) {
    this.current = mediaTimeoutMs;
  }

  /** Sets the channel's media_timeout for the party's SDP `remoteSdp`, before the switch gets it. */
  async before(remoteSdp: string): Promise<void> {
    if (this.mediaTimeoutMs === 0) return;
    // the party sends and receives (sendrecv, not 0.0.0.0), or has no audio to read: the leg's timeout
    const mode = sdpHoldMode(remoteSdp);
    const want = mode === null || mode === 'sendrecv' ? this.mediaTimeoutMs : 0;
    if (want === this.current) return;
    const res = await this.run('modify', () => this.fs.api('uuid_setvar', `${this.fs.uuid} media_timeout ${want}`));
    const body = apiBody(res);
    if (!body.startsWith('+OK')) throw new Error(`uuid_setvar media_timeout: ${replyText(body)}`);
    this.current = want;
  }
}
