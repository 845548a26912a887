/**
 * What an SDP asks of the media path: plain RTP (the media engine takes it directly) or a relay
 * through rtpengine: SDES-SRTP (`RTP/SAVP(F)` with `a=crypto`), or the WebRTC kind (DTLS-SRTP
 * `UDP/TLS/RTP/SAVP(F)` with `a=fingerprint`, ICE `a=ice-ufrag`). Read from the audio m-line(s)
 * and the session level; nothing else of the SDP matters here.
 */

import type { MediaEncryption } from '../../core/sip/media-encryption';

/** How a leg's far end speaks media: 'plain' needs no relay. */
export type FarProfile = 'plain' | 'sdes' | 'webrtc';

export interface SdpNeeds {
  profile: FarProfile;
  /** Why (for logs): the transport protocol and attributes seen. */
  seen: string[];
  /** A problem that makes the offer unusable (a malformed a=crypto), or null. */
  problem: string | null;
}

const CRYPTO = /^a=crypto:\s*(\d{1,10})\s+([A-Za-z0-9_]+)\s+inline:([A-Za-z0-9+/=]+)(\|[^\s]*)?(\s.*)?$/;

/** The profile an SDP needs (plain for an empty or unreadable one: the engine judges those). */
export function sdpNeeds(sdp: string | undefined | null): SdpNeeds {
  const seen: string[] = [];
  let problem: string | null = null;
  let srtpProto = false;
  let dtlsProto = false;
  let crypto = false;
  let fingerprint = false;
  let ice = false;
  for (const raw of (sdp ?? '').split(/\r?\n/)) {
    const line = raw.trim();
    const m = /^m=audio\s+\d+(?:\/\d+)?\s+(\S+)/.exec(line);
    if (m) {
      const proto = m[1]!.toUpperCase();
      if (proto.startsWith('UDP/TLS/RTP/SAVP')) dtlsProto = true;
      else if (proto.startsWith('RTP/SAVP')) srtpProto = true;
      if (proto !== 'RTP/AVP') seen.push(proto);
      continue;
    }
    if (/^a=crypto:/i.test(line)) {
      crypto = true;
      if (!CRYPTO.test(line)) problem ??= `malformed a=crypto: ${line.slice(0, 80)}`;
    } else if (/^a=fingerprint:/i.test(line)) fingerprint = true;
    else if (/^a=ice-ufrag:/i.test(line)) ice = true;
  }
  if (crypto) seen.push('a=crypto');
  if (fingerprint) seen.push('a=fingerprint');
  if (ice) seen.push('a=ice-ufrag');
  if (srtpProto && !crypto && !fingerprint) problem ??= 'RTP/SAVP without a=crypto';
  const profile: FarProfile = dtlsProto || fingerprint || ice ? 'webrtc' : srtpProto || crypto ? 'sdes' : 'plain';
  return { profile, seen, problem };
}

/**
 * What our offer to a party becomes: a browser (contact registered over ws/wss) and `dtls` get the
 * WebRTC profile, `sdes` gets SDES-SRTP, the rest plain RTP (no relay).
 */
export function farProfileFor(encryption: MediaEncryption | undefined, transport?: string): FarProfile {
  if (transport === 'ws' || transport === 'wss' || encryption === 'dtls') return 'webrtc';
  return encryption === 'sdes' ? 'sdes' : 'plain';
}

/** Whether a far end with this profile satisfies a required media encryption. */
export function satisfies(profile: FarProfile, required: MediaEncryption): boolean {
  if (required === 'none') return true;
  // SDES asks for encrypted media: DTLS-SRTP is encrypted too
  if (required === 'sdes') return profile !== 'plain';
  return profile === 'webrtc';
}
