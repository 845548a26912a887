/**
 * The ng flags of each rewrite. The side an offer goes to decides them; an answer goes back to the
 * offerer in the offerer's own profile (rtpengine remembers it), so answers carry no rewrite flags.
 *   engine  plain RTP/AVP, no ICE, no DTLS, RTCP on its own port (what the media engine speaks)
 *   sdes    RTP/SAVP with rtpengine's a=crypto keys (RFC 4568)
 *   webrtc  UDP/TLS/RTP/SAVPF: ICE forced, DTLS passive (the browser is the DTLS client), rtcp-mux required
 */
import type { NgParams } from 'rtpengine-client';
import type { FarProfile } from './sdp';

export type OfferTo = 'engine' | Exclude<FarProfile, 'plain'>;

export function offerFlags(to: OfferTo): NgParams {
  switch (to) {
    case 'engine':
      return { 'transport-protocol': 'RTP/AVP', ICE: 'remove', DTLS: 'off', 'rtcp-mux': ['demux'] };
    case 'sdes':
      return { 'transport-protocol': 'RTP/SAVP', ICE: 'remove', DTLS: 'off', 'rtcp-mux': ['demux'] };
    case 'webrtc':
      return { 'transport-protocol': 'UDP/TLS/RTP/SAVPF', ICE: 'force', DTLS: 'passive', SDES: ['off'], 'rtcp-mux': ['offer', 'require'] };
  }
}
