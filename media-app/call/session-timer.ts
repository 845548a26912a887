/**
 * The session timer of one call's dialog (RFC 4028), owned by its CallSession: armed when the dialog
 * goes up (CallSession.attachDialog), stopped when the call closes or the dialog ends. The terms come
 * from kit/sip-session-timer.ts (the INVITE we answered, or the 2xx to ours).
 *
 * - We refresh (`weRefresh`): at half the interval, an UPDATE without SDP when the peer allows UPDATE,
 *   else a re-INVITE carrying the dialog's current SDP (same version: the media unchanged), both with
 *   `Session-Expires: N;refresher=uac`. A 2xx restarts the timer (its Session-Expires may change the
 *   interval); a 422 is retried once with its Min-SE; 408 or 481 (RFC 4028 10) end the call at once;
 *   any other failure (491 glare, 500) is retried after 2 s, until the expiry.
 * - The peer refreshes: its re-INVITE (CallSession answers it, with answerRefresh's headers) or UPDATE
 *   (answered here) restarts the timer.
 * - Expiry: no refresh by interval − min(32, interval/3) s (either side's duty): `onExpired`, and
 *   the session sends its BYE with `Reason: SIP;cause=408;text="Session timer expired"`.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import type { CallDialog } from './session-types';
import { answerHeaders, minSeOf, parseSessionExpires, uacTerms, uasTerms, type SessionTimerSettings, type TimerTerms } from '../kit/sip-session-timer';

export { uasAnswerHeaders } from '../kit/sip-session-timer';

/** The BYE's Reason of a call whose session timer ran out. */
export const SESSION_EXPIRED_REASON = 'SIP;cause=408;text="Session timer expired"';
const RETRY_MS = 2000;

/** What the timer needs of a drachtio-srf dialog beyond CallDialog. */
interface TimedDialog extends CallDialog {
  readonly res?: SrfResponse;
  readonly local: { uri: string; sdp: string; contact?: string };
  on(event: string, fn: (...args: never[]) => void): unknown;
  off(event: string, fn: (...args: never[]) => void): unknown;
}

export class SessionTimer {
  private expiry: NodeJS.Timeout | null = null;
  private refresh: NodeJS.Timeout | null = null;
  private stopped = false;
  private raisedMinSe = 0;

  private constructor(
    private readonly dialog: TimedDialog,
    private terms: TimerTerms,
    private readonly settings: SessionTimerSettings,
    private readonly onExpired: (why: string) => void,
    private readonly logger: Logger,
  ) {}

  /**
   * The timer of a dialog that just went up: `offer` is the INVITE we answered (null: the dialog is ours,
   * its 2xx says the terms). Null when there is none (no timer agreed, or an internal call without SIP).
   */
  static start(dialog: CallDialog, offer: SrfRequest | null, settings: SessionTimerSettings | undefined, onExpired: (why: string) => void, logger: Logger): SessionTimer | null {
    if (!(dialog instanceof EventEmitter) || !settings) return null;
    const d = dialog as unknown as TimedDialog;
    const terms = offer ? uasTerms(offer, settings) : uacTerms(d.res);
    if (!terms) return null;
    const t = new SessionTimer(d, terms, settings, onExpired, logger);
    d.on('update', t.onUpdate);
    d.on('destroy', t.stop);
    t.arm();
    return t;
  }

  get intervalSec(): number {
    return this.terms.intervalSec;
  }

  get weRefresh(): boolean {
    return this.terms.weRefresh;
  }

  /** Cancels the timers (the call closes, the dialog ended). Idempotent. */
  readonly stop = (): void => {
    this.stopped = true;
    this.clear();
    this.dialog.off('update', this.onUpdate);
    this.dialog.off('destroy', this.stop);
  };

  /**
   * A re-INVITE from the peer (a refresh, or any other: each one refreshes): the timer restarts on its
   * terms; returns the headers for our 2xx to it.
   */
  answerRefresh(req: SrfRequest): Record<string, string> {
    const se = parseSessionExpires(req);
    const supports = /(^|,)\s*timer\s*(,|$)/i.test(`${req.get('Supported') ?? ''},${req.get('Require') ?? ''}`);
    const intervalSec = se ? Math.max(se.interval, this.settings.minSeSec, minSeOf(req)) : this.terms.intervalSec;
    // in this transaction the peer is the UAC: `uac` is the peer, `uas` is us
    const refresher = se?.refresher ?? (supports ? 'uac' : 'uas');
    this.terms = { ...this.terms, intervalSec, weRefresh: refresher === 'uas', peerSupports: supports };
    if (!this.stopped) this.arm();
    return answerHeaders(this.terms, refresher);
  }

  private readonly onUpdate = (req: SrfRequest, res: SrfResponse): void => {
    const headers = this.answerRefresh(req);
    // an UPDATE with an offer gets the dialog's current SDP, as drachtio-srf answers one by itself
    if (req.body && this.dialog.local.sdp) res.send(200, { body: this.dialog.local.sdp, headers: { ...headers, 'Content-Type': 'application/sdp' } });
    else res.send(200, { headers });
  };

  private clear(): void {
    if (this.expiry) clearTimeout(this.expiry);
    if (this.refresh) clearTimeout(this.refresh);
    this.expiry = this.refresh = null;
  }

  /** (Re)starts the expiry, and our next refresh when it is ours. */
  private arm(): void {
    this.clear();
    const i = this.terms.intervalSec;
    this.expiry = setTimeout(() => this.expire('session timer expired'), (i - Math.min(32, i / 3)) * 1000);
    this.expiry.unref();
    if (this.terms.weRefresh) this.scheduleRefresh((i / 2) * 1000);
  }

  private scheduleRefresh(ms: number): void {
    if (this.refresh) clearTimeout(this.refresh);
    this.refresh = setTimeout(() => void this.sendRefresh(), ms);
    this.refresh.unref();
  }

  private expire(why: string): void {
    if (this.stopped) return;
    this.stop();
    this.onExpired(why);
  }

  private async sendRefresh(): Promise<void> {
    this.refresh = null;
    if (this.stopped || !this.dialog.connected) return;
    const min = Math.max(this.settings.minSeSec, this.raisedMinSe);
    const headers: Record<string, string> = { 'Session-Expires': `${Math.max(this.terms.intervalSec, min)};refresher=uac`, 'Min-SE': String(min), Supported: 'timer' };
    if (this.dialog.local.contact) headers.Contact = this.dialog.local.contact;
    let res: SrfResponse;
    try {
      res = this.terms.update
        ? await this.dialog.request({ method: 'UPDATE', headers })
        : await this.dialog.request({ method: 'INVITE', headers: { ...headers, 'Content-Type': 'application/sdp' }, body: this.dialog.local.sdp });
    } catch (err) {
      this.logger.info({ err: (err as Error).message }, 'session refresh not sent');
      return this.retry();
    }
    if (this.stopped) return;
    if (res.status >= 200 && res.status < 300) {
      const se = parseSessionExpires(res);
      this.terms = { ...this.terms, intervalSec: se?.interval ?? this.terms.intervalSec, weRefresh: (se?.refresher ?? 'uac') === 'uac' };
      return this.arm();
    }
    this.logger.info({ status: res.status }, 'session refresh refused');
    if (res.status === 408 || res.status === 481) return this.expire(`session refresh answered ${res.status}`);
    if (res.status === 422 && minSeOf(res) > min && this.raisedMinSe === 0) {
      this.raisedMinSe = minSeOf(res);
      return void this.sendRefresh();
    }
    this.retry();
  }

  /** Another try in RETRY_MS (the expiry still ends the call if none succeeds). */
  private retry(): void {
    if (!this.stopped) this.scheduleRefresh(RETRY_MS);
  }
}
