/**
 * Twilio's debugger records of an account (issue 54), rows of twilio_alerts written by media-app's twiml
 * action (media-app/twiml/alerts.ts), in two shapes: the Monitor API's Alerts (`/v1/Alerts`, ISO 8601
 * dates, `meta` paging with absolute URLs; monitor.ts mounts it) and the 2010 API's Notifications
 * (`/Accounts/{AC}/Notifications`, also per call under `Calls/{CA}/Notifications`; RFC 2822 dates, the
 * 2010 page envelope, DELETE). As on Twilio, a list leaves out the request's variables and the response
 * (`request_variables`, `response_body`, `response_headers` are null there); fetching one shows them.
 */
import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { callsRepo } from '../../core/repos/calls';
import { twilioAlertsRepo, type AlertFilter, type AlertLevel, type TwilioAlertRow } from '../../core/repos/twilio-alerts';
import { moreInfo } from '../../core/twilio/alerts';
import { accountSid, callSid, fromSid, toSid } from '../../core/twilio/sids';
import type { DayFilter } from '../../core/repos/twilio-lists';
import { authOf } from './auth';
import { dateFilter } from './calls';
import { badParam, notFound } from './errors';
import { one, oneOf, pageJson, pageOf, rfc2822, type PageReq, type Params } from './params';
import { API_VERSION } from './call-json';

const DAY = 86_400_000;

/** Twilio's ISO 8601 form: `2026-11-26T13:30:00Z`. */
const iso = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The scheme and host the client reached us at: the Monitor API's page URLs are absolute, and the client follows them. */
const origin = (req: Request): string => `${req.protocol}://${req.get('host') ?? 'localhost'}`;

function alertJson(r: TwilioAlertRow, base: string, whole: boolean): Record<string, unknown> {
  const sid = toSid('NO', r.id);
  return {
    sid,
    account_sid: accountSid(r.customer_id),
    alert_text: r.alert_text,
    api_version: API_VERSION,
    date_created: iso(r.tm_create),
    date_generated: iso(r.tm_create),
    date_updated: iso(r.tm_create),
    error_code: String(r.error_code),
    log_level: r.log_level,
    more_info: moreInfo(r.error_code),
    request_method: r.request_method || null,
    request_url: r.request_url || null,
    request_variables: whole ? r.request_variables : null,
    request_headers: null,
    resource_sid: r.call_id ? callSid(r.call_id) : null,
    response_body: whole ? r.response_body : null,
    response_headers: whole ? r.response_headers : null,
    service_sid: null,
    url: `${base}/v1/Alerts/${sid}`,
  };
}

/** StartDate / EndDate: `YYYY-MM-DD` or an ISO 8601 date-time (GMT); a bare EndDate day counts whole. */
function instant(q: Params, name: string, endOfDay: boolean): Date | undefined {
  const v = one(q, name, 40);
  if (v === undefined) return undefined;
  const day = /^\d{4}-\d{2}-\d{2}$/.test(v);
  const d = new Date(day ? `${v}T00:00:00Z` : v);
  if (Number.isNaN(d.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(v)) throw badParam(`${name} must be a date (YYYY-MM-DD) or an ISO 8601 date-time`);
  if (!endOfDay) return d;
  return new Date(d.getTime() + (day ? DAY : 1));
}

/** The Monitor API's page: the list under `alerts` and `meta` with absolute URLs, as the client follows them. */
function monitorPage(req: Request, pr: PageReq, rows: TwilioAlertRow[]): Record<string, unknown> {
  const base = origin(req);
  const more = rows.length > pr.pageSize;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(req.query)) if (typeof v === 'string' && !['Page', 'PageSize', 'PageToken'].includes(k)) q.set(k, v);
  const urlFor = (page: number) => {
    const u = new URLSearchParams(q);
    u.set('PageSize', String(pr.pageSize));
    u.set('Page', String(page));
    return `${base}/v1/Alerts?${u.toString()}`;
  };
  return {
    alerts: rows.slice(0, pr.pageSize).map((r) => alertJson(r, base, false)),
    meta: {
      page: pr.page,
      page_size: pr.pageSize,
      first_page_url: urlFor(0),
      previous_page_url: pr.page > 0 ? urlFor(pr.page - 1) : null,
      url: urlFor(pr.page),
      next_page_url: more ? urlFor(pr.page + 1) : null,
      key: 'alerts',
    },
  };
}

/** Twilio's log levels; we record errors and warnings, so `notice` and `debug` list nothing. */
const LOG_LEVELS = ['error', 'warning', 'notice', 'debug'] as const;

async function listAlerts(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const q = req.query as Params;
  const pr = pageOf(q);
  const level = q.LogLevel === undefined ? undefined : oneOf(q, 'LogLevel', LOG_LEVELS, 'error');
  const from = instant(q, 'StartDate', false);
  const before = instant(q, 'EndDate', true);
  if (level === 'notice' || level === 'debug') return void res.json(monitorPage(req, pr, []));
  const filter: AlertFilter = { ...(level ? { level } : {}), ...(from ? { from } : {}), ...(before ? { before } : {}) };
  const rows = await twilioAlertsRepo(ctx.db).list(auth.customerId, filter, pr.offset, pr.pageSize + 1);
  res.json(monitorPage(req, pr, rows));
}

async function ownedAlert(ctx: AppContext, customerId: string, sid: string, what: string): Promise<TwilioAlertRow> {
  const id = fromSid('NO', sid.replace(/\.json$/, ''));
  const row = id ? await twilioAlertsRepo(ctx.db).get(customerId, id) : null;
  if (!row) throw notFound(`${what} ${sid.slice(0, 40)}`);
  return row;
}

/** The Monitor API's Alerts (mounted at /v1 by monitor.ts, after basic auth). */
export function alertsRouter(ctx: AppContext): Router {
  const r = Router();
  r.get('/Alerts', (req, res, next) => void listAlerts(ctx, req, res).catch(next));
  r.get('/Alerts/:Sid', (req, res, next) => {
    ownedAlert(ctx, authOf(res.locals).customerId, String(req.params.Sid), 'Alert')
      .then((row) => res.json(alertJson(row, origin(req), true)))
      .catch(next);
  });
  return r;
}

function notificationJson(r: TwilioAlertRow, whole: boolean): Record<string, unknown> {
  const sid = toSid('NO', r.id);
  const ac = accountSid(r.customer_id);
  return {
    sid,
    account_sid: ac,
    api_version: API_VERSION,
    call_sid: r.call_id ? callSid(r.call_id) : null,
    date_created: rfc2822(r.tm_create),
    date_updated: rfc2822(r.tm_create),
    error_code: String(r.error_code),
    log: r.log_level === 'error' ? '0' : '1',
    message_date: rfc2822(r.tm_create),
    message_text: r.alert_text,
    more_info: moreInfo(r.error_code),
    request_method: r.request_method || null,
    request_url: r.request_url,
    ...(whole ? { request_variables: r.request_variables, response_body: r.response_body, response_headers: r.response_headers } : {}),
    uri: `/${API_VERSION}/Accounts/${ac}/${r.call_id ? `Calls/${callSid(r.call_id)}/` : ''}Notifications/${sid}.json`,
  };
}

/** MessageDate / MessageDate< / MessageDate> (UTC days, as the Calls filters) as one tm_create range. */
function messageDates(q: Params): Pick<AlertFilter, 'from' | 'before'> {
  let from: Date | undefined;
  let before: Date | undefined;
  const later = (d: Date) => (from = from && from > d ? from : d);
  const earlier = (d: Date) => (before = before && before < d ? before : d);
  for (const f of dateFilter(q, 'MessageDate') as DayFilter[]) {
    if (f.op !== '<') later(f.day);
    if (f.op === '=') earlier(new Date(f.day.getTime() + DAY));
    if (f.op === '<') earlier(f.day);
  }
  return { ...(from ? { from } : {}), ...(before ? { before } : {}) };
}

async function listNotifications(ctx: AppContext, req: Request, res: Response, callId?: string): Promise<void> {
  const auth = authOf(res.locals);
  const q = req.query as Params;
  const pr = pageOf(q);
  const log = one(q, 'Log', 4);
  if (log !== undefined && log !== '0' && log !== '1') throw badParam('Log must be 0 (errors) or 1 (warnings)');
  const level: AlertLevel | undefined = log === undefined ? undefined : log === '0' ? 'error' : 'warning';
  const filter: AlertFilter = { ...(level ? { level } : {}), ...(callId ? { callId } : {}), ...messageDates(q) };
  const rows = await twilioAlertsRepo(ctx.db).list(auth.customerId, filter, pr.offset, pr.pageSize + 1);
  res.json(
    pageJson(
      req,
      'notifications',
      pr,
      rows.map((r) => notificationJson(r, false)),
    ),
  );
}

/** The call of a `Calls/{CA}/Notifications` path, the account's own (another's: 20404). */
async function callOf(ctx: AppContext, customerId: string, sid: string): Promise<string> {
  const id = fromSid('CA', sid);
  const call = id ? await callsRepo(ctx.db).getOwned(customerId, id) : null;
  if (!call) throw notFound(`Call ${sid.slice(0, 40)}`);
  return call.id;
}

/** The 2010 API's Notifications, account-wide and per call (mounted under /Accounts/:AccountSid). */
export function notificationsRouter(ctx: AppContext): Router {
  const r = Router();
  const run = (f: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response, next: (e?: unknown) => void) => void f(req, res).catch(next);
  r.get(
    ['/Notifications', '/Notifications.json'],
    run((req, res) => listNotifications(ctx, req, res)),
  );
  r.get(
    '/Notifications/:Sid',
    run(async (req, res) => void res.json(notificationJson(await ownedAlert(ctx, authOf(res.locals).customerId, String(req.params.Sid), 'Notification'), true))),
  );
  r.delete(
    '/Notifications/:Sid',
    run(async (req, res) => {
      const row = await ownedAlert(ctx, authOf(res.locals).customerId, String(req.params.Sid), 'Notification');
      await twilioAlertsRepo(ctx.db).remove(row.customer_id, row.id);
      res.status(204).end();
    }),
  );
  r.get(
    ['/Calls/:CallSid/Notifications', '/Calls/:CallSid/Notifications.json'],
    run(async (req, res) => listNotifications(ctx, req, res, await callOf(ctx, authOf(res.locals).customerId, String(req.params.CallSid)))),
  );
  r.get(
    '/Calls/:CallSid/Notifications/:Sid',
    run(async (req, res) => {
      const callId = await callOf(ctx, authOf(res.locals).customerId, String(req.params.CallSid));
      const row = await ownedAlert(ctx, authOf(res.locals).customerId, String(req.params.Sid), 'Notification');
      if (row.call_id !== callId) throw notFound(`Notification ${String(req.params.Sid).slice(0, 40)}`);
      res.json(notificationJson(row, true));
    }),
  );
  return r;
}
