/**
 * The media side of a call's offer/answer: its endpoint, and, for a leg whose far end speaks SRTP or
 * DTLS-SRTP + ICE, the rtpengine relay leg in front of it (the engine always sees plain RTP). Plain
 * legs go straight to the endpoint and send no ng traffic.
 */
import type { CallEndpoint } from '../media-server/endpoint';
import type { RelayLeg } from '../rtpengine';

export interface MediaPath {
  /** The far end's offer → our answer to it. */
  answerOffer(sdp: string): Promise<string>;
  /** A fresh offer of ours to the far end. */
  offer(): Promise<string>;
  /** The far end's answer to our offer. */
  applyAnswer(sdp: string): Promise<void>;
}

export function mediaPath(endpoint: CallEndpoint, relay: RelayLeg | null): MediaPath {
  if (!relay) {
    return {
      answerOffer: (sdp) => endpoint.modify(sdp),
      offer: () => endpoint.offer(),
      applyAnswer: async (sdp) => void (await endpoint.modify(sdp)),
    };
  }
  return {
    answerOffer: async (sdp) => relay.engineAnswer(await endpoint.modify(await relay.farOffer(sdp))),
    offer: async () => relay.engineOffer(await endpoint.offer()),
    applyAnswer: async (sdp) => void (await endpoint.modify(await relay.farAnswer(sdp))),
  };
}
