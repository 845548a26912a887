/**
 * The 488 an offer we cannot meet gets (RFC 3261 §21.4.26) with a Warning (§20.43): code 305
 * "Incompatible media format" and what we take, from our own list only (never text from the offer,
 * which is the caller's), so a phone's log says why.
 */
import { codecAvailability, CODEC_NAMES } from '../../media-engine';
import type { SrfResponse } from '../srf';

const AGENT = 'openvoice';

/** The codecs this node can answer (those whose native module did not build are left out). */
export function answerableCodecs(): string[] {
  const avail = codecAvailability();
  return CODEC_NAMES.filter((c) => avail[c].available);
}

/** The Warning header value of a refused offer. */
export function mediaWarning(): string {
  return `305 ${AGENT} "Incompatible media format: we take ${answerableCodecs().join(', ')}"`;
}

/** Sends 488 Not Acceptable Here with the Warning. */
export function refuseOffer(res: SrfResponse): void {
  res.send(488, { headers: { Warning: mediaWarning() } });
}
