/**
 * RelayLeg: one call leg's media through rtpengine, between the far end (SRTP, DTLS-SRTP + ICE) and
 * the media engine (plain RTP). Owned by the leg's CallSession like its endpoint: the session deletes
 * it when the call ends, and a leg that dies under the call (rtpengine down, an ng error, rtpengine
 * no longer knowing the call) emits 'close' with a reason, which ends the call.
 *
 * The two sides are tagged 'far' and 'eng' in one ng call (its own call-id); whoever offers is the
 * from-tag, so re-INVITEs work in both directions (hold/unhold go through the same rewrite).
 *
 *   live ──close(reason)──► closed        (delete sent when we close it; not when rtpengine is gone)
 */
import { EventEmitter } from 'node:events';
import type { NgParams } from 'rtpengine-client';
import { NgError, type RtpengineClient, type RtpengineHealth } from './client';
import { offerFlags } from './flags';
import type { FarProfile } from './sdp';

export interface RelayLegEvents {
  /** The leg ended; `byUs` false when it died under the call (the reason says why). */
  close: [reason: string, byUs: boolean];
}

type Side = 'far' | 'eng';

export class RelayLeg extends EventEmitter<RelayLegEvents> {
  private phase: 'live' | 'closed' = 'live';
  private readonly untrack: () => void;

  constructor(
    private readonly client: RtpengineClient,
    /** The ng call-id (one per leg). */
    readonly ngCallId: string,
    /** How the far end speaks (what our offers to it become). */
    readonly far: Exclude<FarProfile, 'plain'>,
  ) {
    super();
    client.on('health', this.onHealth);
    this.untrack = client.track({ ngCallId, lost: (reason) => this.die(reason) });
  }

  get closed(): boolean {
    return this.phase === 'closed';
  }

  /** The far end's offer → the SDP offered to the media engine (plain RTP). */
  farOffer(sdp: string): Promise<string> {
    return this.rewrite('offer', 'far', sdp, offerFlags('engine'));
  }

  /** The engine's answer to the far end's offer → the SDP answered to the far end. */
  engineAnswer(sdp: string): Promise<string> {
    return this.rewrite('answer', 'far', sdp, {});
  }

  /** The engine's offer (outbound call, our re-INVITE) → the SDP offered to the far end. */
  engineOffer(sdp: string): Promise<string> {
    return this.rewrite('offer', 'eng', sdp, offerFlags(this.far));
  }

  /** The far end's answer to the engine's offer → the SDP answered to the engine. */
  farAnswer(sdp: string): Promise<string> {
    return this.rewrite('answer', 'eng', sdp, {});
  }

  /** Ends the leg from our side (the call ended): rtpengine frees its ports. Idempotent, never rejects. */
  async close(reason = 'call_ended'): Promise<void> {
    if (!this.end(reason, true)) return;
    // rtpengine gone: nothing to delete
    if (this.client.health === 'down') return;
    await this.client.command('delete', { 'call-id': this.ngCallId }).catch(() => undefined);
  }

  private async rewrite(command: 'offer' | 'answer', offerer: Side, sdp: string, flags: NgParams): Promise<string> {
    if (this.phase === 'closed') throw new NgError(command, 'relay leg closed');
    const answerer: Side = offerer === 'far' ? 'eng' : 'far';
    try {
      const r = await this.client.command(command, { 'call-id': this.ngCallId, 'from-tag': offerer, 'to-tag': answerer, sdp, ...flags });
      if (typeof r.sdp !== 'string' || !r.sdp) throw new NgError(command, 'no SDP in the reply');
      return r.sdp;
    } catch (err) {
      // no answer: rtpengine is gone, the leg with it; a refused SDP is the caller's business (488)
      if (err instanceof NgError && err.noAnswer) this.die(`rtpengine_unreachable: ${err.reason}`);
      throw err;
    }
  }

  private readonly onHealth = (to: RtpengineHealth) => {
    if (to === 'down') this.die(`rtpengine_unreachable: ${this.client.ng}`);
  };

  private die(reason: string): void {
    this.end(reason, false);
  }

  private end(reason: string, byUs: boolean): boolean {
    if (this.phase === 'closed') return false;
    this.phase = 'closed';
    this.client.off('health', this.onHealth);
    this.untrack();
    this.emit('close', reason, byUs);
    return true;
  }
}
