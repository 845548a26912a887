/** Row types of core/repos/twilio-alerts.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export type AlertLevel = 'error' | 'warning';

export interface TwilioAlertRow {
  id: string;
  customer_id: string;
  call_id: string | null;
  error_code: number;
  log_level: AlertLevel;
  alert_text: string;
  request_method: string;
  request_url: string;
  request_variables: string;
  response_body: string;
  response_headers: string;
  tm_create: Date;
}

/** twilio_debugger_webhooks: the account's Debugger webhook. */
export interface TwilioDebuggerWebhookRow {
  customer_id: string;
  url: string;
  tm_update: Date;
}
