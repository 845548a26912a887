/**
 * The Engine's DTMF operations on one leg: digits sent as RFC 4733 telephone-events (the leg's
 * negotiated payload type, its own SSRC and RTP clock) or as tones in its audio, and a digit its
 * owner received in the signalling (SIP INFO) taken like one from the media.
 */
import { dtmfTones } from '../dsp/tones';
import { EngineError } from './engine-error';
import type { DtmfForm, Leg } from './leg';

const MAX_MS = 8000;

export function sendDigits(leg: Leg, digits: string, durationMs: number, form: DtmfForm): void {
  if (!/^[0-9A-Da-d*#]+$/.test(digits)) throw new EngineError(`invalid DTMF digits: ${digits}`, 'EINVAL');
  if (!Number.isFinite(durationMs) || durationMs <= 0 || durationMs > MAX_MS) throw new EngineError(`invalid DTMF duration: ${durationMs}`, 'EINVAL');
  if (form === 'inband') {
    // after what the leg plays already; a bridged leg hears the tones instead of its peer meanwhile
    void leg.player.enqueue([async () => dtmfTones(digits, { onMs: durationMs, offMs: 60 })]).catch(() => undefined);
    return;
  }
  if (form !== 'rfc4733') throw new EngineError(`invalid DTMF form: ${String(form)}`, 'EINVAL');
  if (leg.session.media?.dtmfPayloadType == null) throw new EngineError('telephone-event was not negotiated', 'ENODTMF');
  leg.session.dtmfOut.enqueue(digits, durationMs);
}

export function signalledDigit(leg: Leg, digit: string, durationMs: number): void {
  if (!/^[0-9A-D*#]$/.test(digit)) throw new EngineError(`invalid DTMF digit: ${digit}`, 'EINVAL');
  if (!Number.isFinite(durationMs) || durationMs < 0 || durationMs > MAX_MS) throw new EngineError(`invalid DTMF duration: ${durationMs}`, 'EINVAL');
  leg.signalledDigit({ dtmf: digit, duration: durationMs, source: 'info' });
}
