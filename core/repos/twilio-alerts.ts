/**
 * Twilio debugger records (issue 54): what the Monitor API's Alerts and the 2010 API's Notifications show,
 * one row per error or warning of a customer's TwiML application. Written by media-app (the twiml action),
 * read and deleted by control-api/twilio/. Every query is scoped by the customer. Also the account's
 * Debugger webhook (twilio_debugger_webhooks), set through /v1.0/twilio/debugger_webhook.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import type { AlertLevel, TwilioAlertRow } from '../db/rows/twilio-alerts';
export type { AlertLevel, TwilioAlertRow } from '../db/rows/twilio-alerts';

export type NewAlert = Pick<TwilioAlertRow, 'customer_id' | 'call_id' | 'error_code' | 'log_level' | 'alert_text'> &
  Partial<Pick<TwilioAlertRow, 'request_method' | 'request_url' | 'request_variables' | 'response_body' | 'response_headers'>>;

export interface AlertFilter {
  level?: AlertLevel;
  callId?: string;
  /** tm_create >= from */
  from?: Date;
  /** tm_create < before */
  before?: Date;
}

/** Stored text fields are cut to this many characters (a response body, a long URL). */
export const ALERT_FIELD_MAX = 8192;

/** Rows one retention statement deletes at most, so a large backlog never holds one long lock. */
const PRUNE_BATCH = 5000;

const cut = (s: string | undefined): string => (s ?? '').slice(0, ALERT_FIELD_MAX);

export function twilioAlertsRepo(db: Db) {
  const table = () => db('twilio_alerts');
  return {
    async add(a: NewAlert): Promise<TwilioAlertRow> {
      const row: TwilioAlertRow = {
        id: newId(),
        customer_id: a.customer_id,
        call_id: a.call_id,
        error_code: a.error_code,
        log_level: a.log_level,
        alert_text: cut(a.alert_text),
        request_method: cut(a.request_method),
        request_url: cut(a.request_url),
        request_variables: cut(a.request_variables),
        response_body: cut(a.response_body),
        response_headers: cut(a.response_headers),
        tm_create: clock.now(),
      };
      await table().insert(row);
      return row;
    },
    /** Newest first; `limit` rows from `offset`. */
    async list(customerId: string, f: AlertFilter, offset: number, limit: number): Promise<TwilioAlertRow[]> {
      const q = table().where({ customer_id: customerId });
      if (f.level) q.andWhere('log_level', f.level);
      if (f.callId) q.andWhere('call_id', f.callId);
      if (f.from) q.andWhere('tm_create', '>=', f.from);
      if (f.before) q.andWhere('tm_create', '<', f.before);
      return (await q
        .orderBy([
          { column: 'tm_create', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .offset(offset)
        .limit(limit)) as TwilioAlertRow[];
    },
    async get(customerId: string, id: string): Promise<TwilioAlertRow | null> {
      return ((await table().where({ customer_id: customerId, id }).first()) as TwilioAlertRow | undefined) ?? null;
    },
    async remove(customerId: string, id: string): Promise<boolean> {
      return (await table().where({ customer_id: customerId, id }).delete()) > 0;
    },
    /**
     * Deletes every customer's records created before `before` (the retention pass,
     * control-api/jobs/alerts-retention.ts), PRUNE_BATCH rows a statement; resolves how many went.
     */
    async pruneBefore(before: Date): Promise<number> {
      let total = 0;
      for (;;) {
        // the age on both sides, so each reads only aged rows by the (tm_create, id) index (migration 0973)
        const n = await table()
          .where('tm_create', '<', before)
          .whereIn('id', db('twilio_alerts').select('id').where('tm_create', '<', before).limit(PRUNE_BATCH))
          .delete();
        total += n;
        if (n < PRUNE_BATCH) return total;
      }
    },
    /** The account's Debugger webhook URL, or null when none is set. */
    async debuggerWebhook(customerId: string): Promise<string | null> {
      const row = await db('twilio_debugger_webhooks').where({ customer_id: customerId }).first();
      return row?.url ?? null;
    },
    /** Sets (or with null clears) the account's Debugger webhook URL. */
    async setDebuggerWebhook(customerId: string, url: string | null): Promise<void> {
      if (url === null) {
        await db('twilio_debugger_webhooks').where({ customer_id: customerId }).delete();
        return;
      }
      await db('twilio_debugger_webhooks').insert({ customer_id: customerId, url, tm_update: clock.now() }).onConflict('customer_id').merge();
    },
  };
}

export type TwilioAlertsRepo = ReturnType<typeof twilioAlertsRepo>;
