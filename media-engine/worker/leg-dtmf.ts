/**
 * The Engine's DTMF operations on one leg: digits sent as RFC 4733 telephone-events (the leg's
 * negotiated payload type, its own SSRC and RTP clock) or as tones in its audio, and a digit its
 * owner received in the signalling (SIP INFO) taken like one from the media.
 *
 * Digits waiting on a leg are bounded (`maxWaiting`, EBUSY past it): a digit takes ~160 ms or more
 * to send, and a relayed one comes from the far party's media or signalling, which can key far
 * faster (one RFC 4733 end packet per digit). Unbounded, a caller would grow the worker's queue for
 * as long as the call lasts and the far leg would hear minutes of stale digits.
 */
import { dtmfTones } from '../dsp/tones';
import { EngineError } from './engine-error';
import type { DtmfForm, Leg } from './leg';

const MAX_MS = 8000;
/** Digits that may wait on a leg by default (a flow's digits_send takes up to 100). */
export const MAX_WAITING_DIGITS = 128;

/** In-band digits handed to each leg's player and not played to their end yet. */
const inbandWaiting = new WeakMap<Leg, number>();

function waiting(leg: Leg, form: DtmfForm): number {
  return form === 'inband' ? (inbandWaiting.get(leg) ?? 0) : leg.session.dtmfOut.queued;
}

export function sendDigits(leg: Leg, digits: string, durationMs: number, form: DtmfForm, maxWaiting = MAX_WAITING_DIGITS): void {
  if (!/^[0-9A-Da-d*#]+$/.test(digits)) throw new EngineError(`invalid DTMF digits: ${digits}`, 'EINVAL');
  if (!Number.isFinite(durationMs) || durationMs <= 0 || durationMs > MAX_MS) throw new EngineError(`invalid DTMF duration: ${durationMs}`, 'EINVAL');
  if (form !== 'inband' && form !== 'rfc4733') throw new EngineError(`invalid DTMF form: ${String(form)}`, 'EINVAL');
  if (!Number.isInteger(maxWaiting) || maxWaiting < 1 || maxWaiting > MAX_WAITING_DIGITS) throw new EngineError(`invalid DTMF queue bound: ${maxWaiting}`, 'EINVAL');
  if (form === 'rfc4733' && leg.session.media?.dtmfPayloadType == null) throw new EngineError('telephone-event was not negotiated', 'ENODTMF');
  if (waiting(leg, form) + digits.length > maxWaiting) throw new EngineError(`more than ${maxWaiting} DTMF digits would wait on this leg`, 'EBUSY');
  if (form === 'inband') {
    inbandWaiting.set(leg, waiting(leg, form) + digits.length);
    const played = () => inbandWaiting.set(leg, Math.max(0, waiting(leg, 'inband') - digits.length));
    // after what the leg plays already; a bridged leg hears the tones instead of its peer meanwhile
    void leg.player.enqueue([async () => dtmfTones(digits, { onMs: durationMs, offMs: 60 })]).then(played, played);
    return;
  }
  leg.session.dtmfOut.enqueue(digits, durationMs);
}

export function signalledDigit(leg: Leg, digit: string, durationMs: number): void {
  if (!/^[0-9A-D*#]$/.test(digit)) throw new EngineError(`invalid DTMF digit: ${digit}`, 'EINVAL');
  if (!Number.isFinite(durationMs) || durationMs < 0 || durationMs > MAX_MS) throw new EngineError(`invalid DTMF duration: ${durationMs}`, 'EINVAL');
  leg.signalledDigit({ dtmf: digit, duration: durationMs, source: 'info' });
}
