/**
 * Twilio's debugger records for a call's TwiML (issue 54): each error the twiml action meets (11200,
 * 12100, 12200 ...; the primary URL's too when a fallback then runs) and each warning of a document that
 * still runs (13212 ...) becomes a row of twilio_alerts, which control-api shows as Alerts (Monitor API)
 * and Notifications (2010 API). Credential-like values are masked before they are stored
 * (core/twilio/alerts.ts). A failed write is logged and never touches the call. When the account has a
 * Debugger webhook, each new alert is then POSTed there (debugger.ts), in the background.
 */
import type { Logger } from 'pino';
import type { Db } from '../../core/db/knex';
import { twilioAlertsRepo, type AlertLevel, type TwilioAlertRow } from '../../core/repos/twilio-alerts';
import { alertText, maskedHeaders, maskedUrl, maskedVariables } from '../../core/twilio/alerts';
import type { DebuggerDeliveries } from './debugger';

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
  /** The app's answer's headers, when it answered (name and value pairs, in the order sent). */
  responseHeaders?: [string, string][];
}

export type AlertRecorder = (customerId: string, callId: string | null, r: AlertReport) => Promise<void>;

export function alertRecorder(db: Db, logger: Logger, debuggerHook?: DebuggerDeliveries): AlertRecorder {
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
        response_headers: r.responseHeaders ? maskedHeaders(r.responseHeaders) : '',
      });
    } catch (e) {
      logger.warn({ customerId, callId, code: r.code, err: (e as Error).message }, 'twiml: the alert could not be stored');
      return;
    }
    void debuggerHook?.deliver(row);
  };
}
