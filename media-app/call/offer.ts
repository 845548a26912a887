/**
 * An incoming call's offer, not answered yet (CallSession's SIP leg `offered`): the session answers it
 * when its flow first needs the call up, or refuses it with a final response when the call ends
 * before that. Two kinds: an INVITE (`sipOffer`: a 200 OK, or the final response) and the far side of
 * an internal call (internal-dial.ts: its answer or refusal is what the caller's ringing leg hears).
 */
import { spanEvent } from '../../core/tracing';
import type { CallEndpoint } from '../media-server/endpoint';
import type { RelayLeg } from '../rtpengine';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import type { CallDeps } from './deps';
import { mediaPath } from './media-path';
import { applyAnswerFromAck } from './sdp-exchange';
import { uasAnswerHeaders } from './session-timer';
import type { CallDialog } from './session-types';

export interface IncomingOffer {
  /** The INVITE (its session timer, a late offer); null for an internal call. */
  readonly req: SrfRequest | null;
  /** The far end is another call of this node: nothing of it goes through sip-server. */
  readonly internal: boolean;
  /** Answers with the endpoint's SDP: the dialog, and for a late offer the ACK's answer being applied. */
  accept(media: { endpoint: CallEndpoint; relay: RelayLeg | null }): Promise<{ dialog: CallDialog; ack: Promise<void> | null }>;
  /** The final response of an offer that ends unanswered; nothing when one has been sent. */
  refuse(status: number): void;
  /** The far end gave up before the answer (a CANCEL). */
  onCancel(fn: () => void): void;
}

/** An inbound INVITE's offer: answered with a 200 OK carrying our SDP (the engine's profile through the relay leg). */
export function sipOffer(deps: CallDeps, req: SrfRequest, res: SrfResponse): IncomingOffer {
  return {
    req,
    internal: false,
    async accept({ endpoint, relay }) {
      // through the relay leg the engine's SDP becomes the far end's profile (SRTP, DTLS + ICE)
      const localSdp = !relay ? endpoint.local.sdp : req.body ? await relay.engineAnswer(endpoint.local.sdp) : await relay.engineOffer(endpoint.local.sdp);
      const dialog = await deps.srf.createUAS(req, res, { localSdp, headers: uasAnswerHeaders(req, deps.app.sessionTimer) });
      spanEvent('200 sent');
      // late offer (an INVITE without SDP): our 200 carried the offer, the ACK carries the answer
      return { dialog, ack: req.body ? null : applyAnswerFromAck(dialog, mediaPath(endpoint, relay), deps.logger) };
    },
    refuse(status) {
      if (!res.finalResponseSent) res.send(status);
    },
    onCancel(fn) {
      req.on('cancel', fn);
    },
  };
}
