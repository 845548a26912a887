/**
 * `media_encryption` of a trunk, provider or extension: what the platform asks of that party's media.
 *   none  plain RTP offered; an SRTP or WebRTC offer from it is still accepted (through rtpengine)
 *   sdes  SDES-SRTP (RTP/SAVP with a=crypto, RFC 4568) offered; a plain offer from it is refused (488)
 *   dtls  DTLS-SRTP with ICE and rtcp-mux (the WebRTC profile, UDP/TLS/RTP/SAVPF) offered; likewise
 */
export const MEDIA_ENCRYPTIONS = ['none', 'sdes', 'dtls'] as const;
export type MediaEncryption = (typeof MEDIA_ENCRYPTIONS)[number];

export function isMediaEncryption(v: unknown): v is MediaEncryption {
  return typeof v === 'string' && (MEDIA_ENCRYPTIONS as readonly string[]).includes(v);
}
