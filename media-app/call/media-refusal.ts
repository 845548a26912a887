/**
 * The 488 an offer we cannot meet gets (RFC 3261 §21.4.26) with a Warning (§20.43), so a phone's log
 * says why: 302 "Incompatible transport protocol" when the offer's transport or encryption is what
 * failed (an SRTP profile the party's media_encryption does not allow, no rtpengine for it), else 305
 * "Incompatible media format" naming the codecs we take. The text comes from our own lists only, never
 * from the offer, which is the caller's.
 */
import { codecAvailability, CODEC_NAMES } from '../../media-engine';
import type { SrfResponse } from '../kit/srf';

const AGENT = 'openvoice';

/** The codecs this node can answer (those whose native module did not build are left out). */
export function answerableCodecs(): string[] {
  const avail = codecAvailability();
  return CODEC_NAMES.filter((c) => avail[c].available);
}

/** The Warning header value for a refused offer; `why` is our own reason (logged, not sent). */
export function mediaWarning(why = ''): string {
  if (/transport|media_encryption|rtpengine|SAVP|DTLS|crypto/i.test(why)) return `302 ${AGENT} "Incompatible transport protocol"`;
  return `305 ${AGENT} "Incompatible media format: we take ${answerableCodecs().join(', ')}"`;
}

/** Sends 488 Not Acceptable Here with the Warning. */
export function refuseOffer(res: SrfResponse, why = ''): void {
  res.send(488, { headers: { Warning: mediaWarning(why) } });
}
