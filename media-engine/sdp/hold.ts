/**
 * What an SDP says of its sender's audio direction, read as a hold (RFC 3264 §8.4; RFC 2543's
 * c=0.0.0.0; FreeSWITCH's switch_core_media_negotiate_sdp reads an offer the same way): the platform's
 * one reading of it, for the switch's hold timeout (esl/media-timeout.ts), the fsmrf backend's
 * media_timeout across holds (media-app/media-server/fsmrf/hold-timeout.ts) and a phone's own hold
 * (media-app/call/peer-hold.ts).
 */
import { parseSdp } from './sdp';

/** 'holds': a=sendonly, a=inactive or c=0.0.0.0; 'recvonly'; 'sendrecv' (no direction attribute included). */
export type SdpHoldMode = 'holds' | 'recvonly' | 'sendrecv';

/** The SDP's audio direction as a hold; null when it has no audio that can be read (none, port 0, not an SDP). */
export function sdpHoldMode(sdp: string): SdpHoldMode | null {
  try {
    const audio = parseSdp(sdp).audio;
    if (!audio || audio.port === 0) return null;
    if (audio.direction === 'sendonly' || audio.direction === 'inactive' || audio.address === '0.0.0.0') return 'holds';
    return audio.direction === 'recvonly' ? 'recvonly' : 'sendrecv';
  } catch {
    return null;
  }
}
