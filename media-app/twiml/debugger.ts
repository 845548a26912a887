/**
 * The account's Debugger webhook (issue 54): each new alert POSTed to the URL the customer set, as Twilio
 * does (Sid, AccountSid, ParentAccountSid, Timestamp, Level, PayloadType, Payload: JSON), signed with
 * X-Twilio-Signature, through the egress policy (the address is resolved and checked at delivery, not only
 * when the URL was stored), once (no retry), in the background: the call does not wait for it.
 *
 * One owner of the deliveries in flight: at most `maxInFlight` per customer (TWILIO_DEBUGGER_MAX_IN_FLIGHT);
 * an alert over the cap is still stored but its delivery is dropped and logged (not queued: a burst of
 * alerts is what a broken app makes, and a queue would only deliver it late). stop() aborts every delivery
 * in flight and resolves once each has ended; none starts after it.
 */
import type { Logger } from 'pino';
import type { Db } from '../../core/db/knex';
import { twilioAlertsRepo, type TwilioAlertRow } from '../../core/repos/twilio-alerts';
import { signedWebhook } from '../../core/twilio/signature';
import { accountSid, callSid, toSid } from '../../core/twilio/sids';
import { FlowHttpError, type FlowHttp } from '../kit/http';

/** What the Debugger webhook needs: an HTTP client through the egress policy and the account's signing key. */
export interface DebuggerSender {
  http: FlowHttp;
  authToken(customerId: string): Promise<string | null>;
  /** How long the webhook may take to answer (TWILIO_DEBUGGER_TIMEOUT_MS). */
  timeoutMs: number;
  /** Deliveries in flight per customer (TWILIO_DEBUGGER_MAX_IN_FLIGHT). */
  maxInFlight: number;
}

/** How one delivery ended. */
export type DebuggerOutcome =
  | { kind: 'sent'; status: number }
  | { kind: 'none' } // no webhook set, or the customer is gone
  | { kind: 'dropped' } // the customer's deliveries in flight were at the cap
  | { kind: 'refused'; reason: string } // the egress policy said no
  | { kind: 'failed'; reason: string } // transport failure or timeout
  | { kind: 'aborted' }; // the service stopped

/** Twilio's Debugger webhook parameters for one alert (Payload: the alert as JSON). */
export function debuggerParams(a: TwilioAlertRow): Record<string, string> {
  const info = Object.fromEntries(new URLSearchParams(a.alert_text));
  const payload = {
    resource_sid: a.call_id ? callSid(a.call_id) : null,
    service_sid: null,
    error_code: String(a.error_code),
    more_info: info,
    webhook: {
      type: 'application/json',
      request: { url: a.request_url, method: a.request_method, headers: {}, parameters: Object.fromEntries(new URLSearchParams(a.request_variables)) },
      response: { status_code: null, headers: Object.fromEntries(new URLSearchParams(a.response_headers)), body: a.response_body },
    },
  };
  return {
    Sid: toSid('NO', a.id),
    AccountSid: accountSid(a.customer_id),
    ParentAccountSid: '',
    Timestamp: a.tm_create.toISOString(),
    Level: a.log_level === 'error' ? 'ERROR' : 'WARNING',
    PayloadType: 'application/json',
    Payload: JSON.stringify(payload),
  };
}

export class DebuggerDeliveries {
  /** The aborts of each customer's deliveries in flight. */
  private readonly inFlight = new Map<string, Set<AbortController>>();
  private readonly running = new Set<Promise<DebuggerOutcome>>();
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly send: DebuggerSender,
  ) {}

  /** Deliveries of the customer in flight now. */
  count(customerId: string): number {
    return this.inFlight.get(customerId)?.size ?? 0;
  }

  /** Starts the delivery of one stored alert; resolves with how it ended (never rejects). */
  deliver(a: TwilioAlertRow): Promise<DebuggerOutcome> {
    if (this.stopped) return Promise.resolve({ kind: 'aborted' });
    const mine = this.inFlight.get(a.customer_id) ?? new Set<AbortController>();
    if (mine.size >= this.send.maxInFlight) {
      this.logger.info({ customerId: a.customer_id, sid: toSid('NO', a.id), inFlight: mine.size }, 'twiml: debugger webhook deliveries at the cap, this one dropped');
      return Promise.resolve({ kind: 'dropped' });
    }
    const abort = new AbortController();
    mine.add(abort);
    this.inFlight.set(a.customer_id, mine);
    const p = this.post(a, abort.signal).finally(() => {
      mine.delete(abort);
      if (!mine.size && this.inFlight.get(a.customer_id) === mine) this.inFlight.delete(a.customer_id);
      this.running.delete(p);
    });
    this.running.add(p);
    return p;
  }

  /** Aborts every delivery in flight and resolves once each has ended; later alerts are not delivered. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const set of this.inFlight.values()) for (const abort of set) abort.abort(new Error('the twiml subsystem stopped'));
    await Promise.all([...this.running]);
  }

  private async post(a: TwilioAlertRow, signal: AbortSignal): Promise<DebuggerOutcome> {
    try {
      const url = await twilioAlertsRepo(this.db).debuggerWebhook(a.customer_id);
      const token = url && !signal.aborted ? await this.send.authToken(a.customer_id) : null;
      if (signal.aborted) return { kind: 'aborted' };
      if (!url || !token) return { kind: 'none' };
      const { url: target, body, signature } = signedWebhook(token, 'POST', url, debuggerParams(a));
      const headers = { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature, 'user-agent': 'openvoice-twiml/1.0' };
      const res = await this.send.http.request({ method: 'POST', url: target, headers, body, timeoutMs: this.send.timeoutMs, maxBytes: 64 * 1024, signal });
      if (res.status >= 300) this.logger.info({ customerId: a.customer_id, status: res.status }, 'twiml: the debugger webhook answered an error');
      return { kind: 'sent', status: res.status };
    } catch (e) {
      if (signal.aborted) return { kind: 'aborted' };
      const reason = (e as Error).message;
      this.logger.info({ customerId: a.customer_id, code: a.error_code, err: reason }, 'twiml: the debugger webhook was not delivered');
      return e instanceof FlowHttpError && e.refused ? { kind: 'refused', reason } : { kind: 'failed', reason };
    }
  }
}
