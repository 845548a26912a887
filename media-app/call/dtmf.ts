/**
 * DTMF in the signalling and between legs:
 *
 * - An in-dialog INFO (`application/dtmf-relay`: `Signal=7`, `Duration=160`; `application/dtmf`: `7`)
 *   becomes a digit of the call like an RFC 4733 one (flows, gather, events) and is relayed to the
 *   bridged leg. An INFO without a body (keepalive) is answered 200 as before; a body of another type
 *   415 (with Accept), a DTMF body that names no key 400.
 * - A digit the bridged leg received (RFC 4733, in-band or INFO) is sent on in the form this leg's
 *   party takes (`dtmfForm`): its dtmf_mode, RFC 4733 only when its SDP negotiated telephone-event.
 */
import type { DtmfMode } from '../../core/calls/dtmf-mode';
import type { DtmfEvent } from '../../media-engine';
import type { CallEndpoint } from '../media-server/endpoint';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import type { CallDialog } from './session-types';

const KEYS = '0123456789*#ABCD';
/** Used when an INFO names no duration (application/dtmf never does). */
export const INFO_DEFAULT_DURATION_MS = 250;
const MIN_MS = 40;
const MAX_MS = 5000;
export const INFO_ACCEPT = 'application/dtmf-relay, application/dtmf';

export type InfoDtmf = { kind: 'digit'; digit: string; durationMs: number } | { kind: 'empty' } | { kind: 'unsupported'; type: string } | { kind: 'bad'; why: string };

/** A key from its name ('7', '*', 'a') or its RFC 4733 event number ('10' is *, '11' #, '12'-'15' A-D). */
function keyOf(v: string): string | null {
  const t = v.trim().toUpperCase();
  if (t.length === 1 && KEYS.includes(t)) return t;
  if (/^\d{1,2}$/.test(t) && Number(t) < 16) return KEYS[Number(t)]!;
  return null;
}

/** What an in-dialog INFO carries. */
export function parseInfo(contentType: string | undefined, body: string | undefined): InfoDtmf {
  const text = body ?? '';
  if (!text.trim()) return { kind: 'empty' };
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/dtmf') {
    const key = keyOf(text);
    return key ? { kind: 'digit', digit: key, durationMs: INFO_DEFAULT_DURATION_MS } : { kind: 'bad', why: 'application/dtmf names no DTMF key' };
  }
  if (type !== 'application/dtmf-relay') return { kind: 'unsupported', type: type || '(none)' };
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const i = line.indexOf('=');
    if (i > 0) fields.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  const signal = fields.get('signal');
  if (signal === undefined) return { kind: 'bad', why: 'application/dtmf-relay without Signal' };
  const key = keyOf(signal);
  if (!key) return { kind: 'bad', why: 'Signal is not a DTMF key' };
  const d = fields.get('duration');
  if (d === undefined) return { kind: 'digit', digit: key, durationMs: INFO_DEFAULT_DURATION_MS };
  if (!/^\d{1,6}$/.test(d)) return { kind: 'bad', why: 'Duration is not a number of milliseconds' };
  return { kind: 'digit', digit: key, durationMs: Math.min(MAX_MS, Math.max(MIN_MS, Number(d))) };
}

/** The INFO body we send for a digit (application/dtmf-relay, the form most phones and gateways take). */
export function infoBody(digit: string, durationMs: number): string {
  return `Signal=${digit}\r\nDuration=${Math.round(durationMs)}\r\n`;
}

/** How a digit goes to this leg's party: its dtmf_mode, with RFC 4733 only where telephone-event was negotiated. */
export function dtmfForm(mode: DtmfMode, ep: CallEndpoint | null): DtmfMode {
  if (mode === 'rfc4733' && !ep?.telephoneEvent) return 'info';
  return mode;
}

/** What the session gives the functions below. */
export interface DtmfCall {
  readonly id: string;
  readonly dtmfMode: DtmfMode;
  readonly endpoint: CallEndpoint | null;
  readonly dialog: CallDialog | null;
  readonly isEnded: boolean;
  /** a digit of this call (no endpoint to carry it: straight to the call's listeners) */
  emitDigit(digit: string): void;
  readonly deps: { logger: { info(o: object, msg: string): void; warn(o: object, msg: string): void } };
}

/** Answers an in-dialog INFO: a DTMF body becomes the call's digit (and is relayed), the rest as said above. */
export function answerInfo(call: DtmfCall, req: SrfRequest, res: SrfResponse): void {
  const got = parseInfo(req.get('Content-Type'), req.body);
  switch (got.kind) {
    case 'empty':
      return void res.send(200);
    case 'unsupported':
      call.deps.logger.info({ call: call.id, type: got.type.slice(0, 80) }, 'INFO with a body we do not take: 415');
      return void res.send(415, { headers: { Accept: INFO_ACCEPT } });
    case 'bad':
      return void res.send(400, got.why);
    case 'digit': {
      res.send(200);
      if (call.isEnded) return;
      const ep = call.endpoint;
      if (!ep || ep.destroyed) return call.emitDigit(got.digit);
      ep.injectDtmf(got.digit, got.durationMs).catch((err: Error) => call.deps.logger.warn({ call: call.id, err: err.message }, 'INFO digit not taken by the media endpoint'));
    }
  }
}

/**
 * Sends digits to this leg's party in its form (digits_send, a relayed digit). INFO goes one request
 * per digit, each after the previous one's answer (RFC 6086 allows one INFO at a time).
 */
export async function sendDigits(call: DtmfCall, digits: string, durationMs: number, maxWaiting?: number): Promise<void> {
  const form = dtmfForm(call.dtmfMode, call.endpoint);
  if (form !== 'info') {
    if (!call.endpoint) throw new Error('no media endpoint');
    return call.endpoint.sendDtmf(digits, durationMs, form, maxWaiting);
  }
  const dialog = call.dialog;
  if (!dialog) throw new Error('no dialog to send INFO on');
  for (const d of digits.toUpperCase()) {
    const r = await dialog.request({ method: 'INFO', headers: { 'Content-Type': 'application/dtmf-relay' }, body: infoBody(d, durationMs) });
    if (r.status >= 300) throw Object.assign(new Error(`INFO refused: ${r.status}`), { status: r.status });
  }
}

/**
 * Relayed digits that may wait per leg: in the media worker's queue (RFC 4733, tones), or here for
 * their INFO's turn. The far party can key far faster than digits can be sent (one RFC 4733 end
 * packet per digit); past this many waiting, a relayed digit is dropped (logged once per run of drops).
 */
export const RELAY_MAX_WAITING = 8;

/** Per session: INFO digits one at a time, in order, behind any still waiting for an answer; the backlog bounded. */
export class DigitRelay {
  private chain: Promise<void> = Promise.resolve();
  /** digits in the chain, not sent yet */
  private waiting = 0;
  /** digits dropped since the last one that went through */
  private dropped = 0;
  constructor(private readonly call: DtmfCall) {}

  /** A digit the bridged leg received: this leg's party gets it (in-band tones are not put back into audio that already carries them). */
  relay(e: DtmfEvent): void {
    const call = this.call;
    if (call.isEnded) return;
    const form = dtmfForm(call.dtmfMode, call.endpoint);
    if (e.source === 'inband' && form === 'inband') return;
    if (this.waiting >= RELAY_MAX_WAITING) return this.drop(`more than ${RELAY_MAX_WAITING} relayed digits wait for their INFO`);
    // a key held longer than 5 s is sent 5 s long (the worker refuses more than 8 s)
    const durationMs = e.duration > 0 ? Math.min(e.duration, MAX_MS) : 100;
    this.waiting++;
    this.chain = this.chain
      .then(() => (call.isEnded ? undefined : sendDigits(call, e.dtmf, durationMs, RELAY_MAX_WAITING)))
      .then(
        () => {
          this.dropped = 0;
        },
        (err: Error & { code?: string }) => {
          if (err.code === 'EBUSY') this.drop(err.message);
          else call.deps.logger.warn({ call: call.id, err: err.message }, 'relayed digit not sent');
        },
      )
      .finally(() => {
        this.waiting--;
      });
  }

  private drop(why: string): void {
    if (this.dropped++ === 0) this.call.deps.logger.warn({ call: this.call.id, why }, 'relayed digits dropped: the far party keys faster than its leg can send');
  }
}
