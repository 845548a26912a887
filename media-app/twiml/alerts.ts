/**
 * Twilio's debugger records for a call's TwiML (issue 54): each error the twiml action meets (11200,
 * 12100, 12200 ...; the primary URL's too when a fallback then runs) and each warning of a document that
 * still runs (13212 ...) becomes a row of twilio_alerts, which control-api shows as Alerts (Monitor API)
 * and Notifications (2010 API). Credential-like values are masked before they are stored
 * (core/twilio/alerts.ts). A failed write is logged and never touches the call. When the account has a
 * Debugger webhook, each new alert is then POSTed there as Twilio does (Sid, AccountSid, ParentAccountSid,
 * Timestamp, Level, PayloadType, Payload: JSON), signed with X-Twilio-Signature, through the egress policy,
 * once (no retry), in the background: the call does not wait for it.
 */
import type { Logger } from 'pino';
import type { Db } from '../../core/db/knex';
import { twilioAlertsRepo, type AlertLevel, type TwilioAlertRow } from '../../core/repos/twilio-alerts';
import { alertText, maskedUrl, maskedVariables } from '../../core/twilio/alerts';
import { signedWebhook } from '../../core/twilio/signature';
import { accountSid, callSid, toSid } from '../../core/twilio/sids';
import type { FlowHttp } from '../kit/http';

/** What failed (or warned), and the request to the customer's app it came from, when there was one. */
export interface AlertReport {
  code: number;
  level: AlertLevel;
  message: string;
  /** The document's URL as configured ('' for inline TwiML). */
  url: string;
  method: string;
  params: Record<string, string>;
  /** The app's answer, when it was one we read (a document that did not parse or validate). */
  responseBody?: string;
}

export type AlertRecorder = (customerId: string, callId: string | null, r: AlertReport) => Promise<void>;

/** What the Debugger webhook needs: an HTTP client through the egress policy and the account's signing key. */
export interface DebuggerSender {
  http: FlowHttp;
  authToken(customerId: string): Promise<string | null>;
  timeoutMs: number;
}

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
      response: { status_code: null, headers: {}, body: a.response_body },
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

async function deliver(db: Db, logger: Logger, send: DebuggerSender, a: TwilioAlertRow): Promise<void> {
  const url = await twilioAlertsRepo(db).debuggerWebhook(a.customer_id);
  if (!url) return;
  const token = await send.authToken(a.customer_id);
  if (!token) return;
  const { url: target, body, signature } = signedWebhook(token, 'POST', url, debuggerParams(a));
  const headers = { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature, 'user-agent': 'openvoice-twiml/1.0' };
  const res = await send.http.request({ method: 'POST', url: target, headers, body, timeoutMs: send.timeoutMs, maxBytes: 64 * 1024 });
  if (res.status >= 300) logger.info({ customerId: a.customer_id, status: res.status }, 'twiml: the debugger webhook answered an error');
}

export function alertRecorder(db: Db, logger: Logger, send?: DebuggerSender): AlertRecorder {
  const alerts = twilioAlertsRepo(db);
  return async (customerId, callId, r) => {
    let row: TwilioAlertRow;
    try {
      row = await alerts.add({
        customer_id: customerId,
        call_id: callId,
        error_code: r.code,
        log_level: r.level,
        alert_text: alertText(r.code, r.level, r.message, r.url),
        request_method: r.url ? r.method : '',
        request_url: r.url ? maskedUrl(r.url) : '',
        request_variables: r.url ? maskedVariables(r.params) : '',
        response_body: r.responseBody ?? '',
      });
    } catch (e) {
      logger.warn({ customerId, callId, code: r.code, err: (e as Error).message }, 'twiml: the alert could not be stored');
      return;
    }
    if (!send) return;
    deliver(db, logger, send, row).catch((e: Error) => logger.info({ customerId, code: r.code, err: e.message }, 'twiml: the debugger webhook was not delivered'));
  };
}
