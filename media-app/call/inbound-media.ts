/**
 * The media of an inbound INVITE, before any call exists: the endpoint for a plain offer (today's
 * direct path, no ng traffic), or, for an offer that needs it (SDES-SRTP, DTLS-SRTP + ICE), a relay
 * leg through rtpengine whose plain RTP side the endpoint answers. Refused (488) when the offer is
 * malformed, when the source's `media_encryption` asks for more than it offers, or when rtpengine
 * is not there for an offer that needs it.
 */
import { randomBytes } from 'node:crypto';
import type { AudioCodecName } from '../../media-engine';
import type { CallEndpoint } from '../media-server/endpoint';
import type { MediaEncryption } from '../../core/sip/media-encryption';
import { satisfies, sdpNeeds, type RelayLeg } from '../rtpengine';
import type { SrfRequest } from '../kit/srf';
import type { CallDeps } from './deps';
import { createCallEndpoint } from './endpoint';

export type InboundMedia = { endpoint: CallEndpoint; relay: RelayLeg | null } | { refused: string };

export async function inboundMedia(deps: CallDeps, req: SrfRequest, required: MediaEncryption, codecs?: AudioCodecName[]): Promise<InboundMedia> {
  const offer = req.body || undefined;
  const needs = sdpNeeds(offer);
  if (needs.problem) return { refused: needs.problem };
  // a late offer (no SDP) is judged on the answer in the ACK; an offer is judged here
  if (offer && !satisfies(needs.profile, required)) return { refused: `media_encryption ${required} required, offer is ${needs.profile}` };
  let relay: RelayLeg | null = null;
  let engineOffer = offer;
  if (offer && needs.profile !== 'plain') {
    try {
      relay = deps.relay?.leg(randomBytes(6).toString('hex'), needs.profile) ?? null;
      if (!relay) return { refused: `${needs.seen.join(' ')} needs rtpengine (RTPENGINE_NG not set)` };
      engineOffer = await relay.farOffer(offer);
    } catch (err) {
      await relay?.close('offer refused');
      return { refused: `rtpengine: ${(err as Error).message}` };
    }
  }
  // the call's endpoint (endpoint.ts): no call exists yet, so its failure refuses the INVITE
  const made = await createCallEndpoint(deps, { remoteSdp: engineOffer, codecs });
  if ('endpoint' in made) return { endpoint: made.endpoint, relay };
  await relay?.close('engine refused the offer');
  return { refused: made.error };
}
