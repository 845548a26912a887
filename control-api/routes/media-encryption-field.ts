/** The `media_encryption` field of trunks, providers and extensions (core/sip/media-encryption.ts). */
import { z } from 'zod';
import { MEDIA_ENCRYPTIONS } from '../../core/sip/media-encryption';

export const mediaEncryption = z
  .enum(MEDIA_ENCRYPTIONS, { message: `must be one of ${MEDIA_ENCRYPTIONS.join(', ')}` })
  .describe(
    'Media towards this party, through rtpengine when encrypted. none (default): plain RTP offered, an SRTP or WebRTC offer from it is still accepted; ' +
      'sdes: SDES-SRTP (RTP/SAVP, a=crypto) offered, a plain offer from it refused with 488; dtls: DTLS-SRTP with ICE and rtcp-mux (UDP/TLS/RTP/SAVPF) offered, a plain offer refused with 488.',
  );
