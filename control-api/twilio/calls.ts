/**
 * Calls: create, fetch, list, update (redirect with Url/Twiml, end with Status=completed|canceled).
 * Create goes through POST /v1.0/calls's own path (control-api/routes/calls.ts createCalls): the
 * same checks (egress, caller id, whitelist, balance, concurrency), rows and call.originate. The
 * call's flow is one `twiml` action (run by media-app); Record, SendDigits and MachineDetection put
 * their actions / AMD in front of it. The status callback settings stay in the row's data.twilio.
 */
import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { ApiError } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import { twilioListsRepo, type DayFilter, type TwilioCallFilter } from '../../core/repos/twilio-lists';
import type { TwilioCallStatus } from '../../core/twilio/statuses';
import { fromSid } from '../../core/twilio/sids';
import { commandBus } from '../calls/bus';
import { createCalls, deleteEndedCall, hangupCall } from '../routes/calls';
import { egressUrlProblem } from '../egress-field';
import { withFlow } from './flow-wait';
import { addressOf } from './addresses';
import { authOf } from './auth';
import { badParam, notFound, TwilioError } from './errors';
import { bool, httpUrl, int, many, one, oneOf, pageJson, pageOf, type Params } from './params';
import { TWILIO_CALL_STATUSES, twilioCallJson, type TwilioCallData } from './call-json';

export const CALLBACK_EVENTS = ['initiated', 'ringing', 'answered', 'completed'] as const;
const METHODS = ['GET', 'POST'] as const;
const TWIML_MAX = 4000;

/**
 * The `twiml` action a Url or Twiml parameter stands for (the flow action of issue 36's twiml part),
 * with FallbackUrl / FallbackMethod (fetched when Url's document cannot be fetched or run; Url only).
 */
export function twimlAction(ctx: AppContext, p: Params): { type: 'twiml'; option: Record<string, string> } | null {
  const url = httpUrl(p, 'Url', 21205);
  const twiml = one(p, 'Twiml', TWIML_MAX + 1);
  if (twiml !== undefined && twiml.length > TWIML_MAX) throw badParam(`Twiml is longer than ${TWIML_MAX} characters`, 21208);
  const method = oneOf(p, 'Method', METHODS, 'POST');
  const fallbackUrl = httpUrl(p, 'FallbackUrl', 21205);
  const fallbackMethod = oneOf(p, 'FallbackMethod', METHODS, 'POST');
  if (url && twiml) throw badParam('Give Url or Twiml, not both');
  if (fallbackUrl && !url) throw badParam('FallbackUrl needs Url', 21205);
  if (url) {
    for (const [name, u] of [
      ['Url', url],
      ['FallbackUrl', fallbackUrl],
    ] as const) {
      const problem = u ? egressUrlProblem(ctx, u) : null;
      if (problem) throw badParam(`${name}: ${problem}`, 21205);
    }
    return { type: 'twiml', option: { url, method, ...(fallbackUrl ? { fallback_url: fallbackUrl, fallback_method: fallbackMethod } : {}) } };
  }
  if (twiml !== undefined && twiml.trim() !== '') return { type: 'twiml', option: { twiml } };
  return null;
}

/** The status callback settings of a create (or number update): null without StatusCallback. */
export function callbackOf(ctx: AppContext, p: Params): TwilioCallData | null {
  const url = httpUrl(p, 'StatusCallback', 21609);
  const method = oneOf(p, 'StatusCallbackMethod', METHODS, 'POST');
  const events = many(p, 'StatusCallbackEvent');
  for (const e of events) if (!(CALLBACK_EVENTS as readonly string[]).includes(e)) throw badParam(`StatusCallbackEvent must be among ${CALLBACK_EVENTS.join(', ')}: ${e.slice(0, 40)}`);
  if (!url) return null;
  const problem = egressUrlProblem(ctx, url);
  if (problem) throw badParam(`StatusCallback: ${problem}`, 21609);
  return { status_callback: url, status_callback_method: method, status_callback_events: events.length ? [...new Set(events)] : ['completed'] };
}

/** SendDigits ("1234w#": w waits 0.5 s) as digits_send and sleep actions. */
function sendDigitsActions(digits: string): { type: string; option: Record<string, unknown> }[] {
  if (!/^[0-9*#wW]{1,100}$/.test(digits)) throw badParam('SendDigits may hold only 0-9, *, # and w', 21206);
  const out: { type: string; option: Record<string, unknown> }[] = [];
  for (const m of digits.matchAll(/[wW]+|[0-9*#]+/g)) {
    const run = m[0];
    out.push(/w/i.test(run) ? { type: 'sleep', option: { duration: 500 * run.length } } : { type: 'digits_send', option: { digits: run } });
  }
  return out;
}

/** An ApiError of the shared call path, in Twilio's codes for To / From. */
export function fromCreateError(e: ApiError): TwilioError | ApiError {
  const f = e.details?.[0]?.field;
  const field = typeof f === 'string' ? f : '';
  if (e.http === 400 && field.startsWith('source')) return new TwilioError(400, 21210, `'From' is not a valid caller id for this account: ${e.message}`);
  if ((e.http === 400 || e.http === 404 || e.http === 409) && field.startsWith('destinations')) return new TwilioError(400, 21211, `Invalid 'To': ${e.message}`);
  if (e.reason === 'PERMISSION_DENIED' && field.startsWith('destinations')) return new TwilioError(400, 21215, `'To' is not allowed: ${e.message}`);
  return e;
}

async function create(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const p = req.body as Params;
  const to = addressOf('To', one(p, 'To'));
  const from = addressOf('From', one(p, 'From'));
  const main = twimlAction(ctx, p);
  if (!main) throw badParam('Either Url or Twiml is required', 21205);
  const callback = callbackOf(ctx, p);
  int(p, 'Timeout', 1, 600);
  const record = bool(p, 'Record') ?? false;
  const amdMode = one(p, 'MachineDetection', 32);
  if (amdMode !== undefined && !['Enable', 'DetectMessageEnd'].includes(amdMode)) throw badParam('MachineDetection must be Enable or DetectMessageEnd');
  const asyncAmd = bool(p, 'AsyncAmd') ?? false;
  const digits = one(p, 'SendDigits', 200);
  const actions = [...(record ? [{ type: 'recording_start', option: { format: 'wav', twilio_source: 'OutboundAPI' } }] : []), ...(digits ? sendDigitsActions(digits) : []), main];
  let created: CallRow;
  try {
    const r = await createCalls(
      ctx,
      auth.customerId,
      { source: from, destinations: [to], actions, ...(amdMode ? { amd: { machine_handle: 'continue', async: asyncAmd } } : {}) },
      { data: callback ? { twilio: callback } : {} },
    );
    created = r.calls[0]!;
  } catch (e) {
    throw e instanceof ApiError ? fromCreateError(e) : e;
  }
  res.status(201).json(twilioCallJson(created));
}

async function owned(ctx: AppContext, customerId: string, sid: string): Promise<CallRow> {
  const id = fromSid('CA', sid);
  const c = id ? await callsRepo(ctx.db).getOwned(customerId, id) : null;
  if (!c) throw notFound(`Call ${sid.slice(0, 40)}`);
  return c;
}

/** StartTime=YYYY-MM-DD (that UTC day), StartTime< (before it), StartTime> (on or after it), as Twilio filters. */
export function dateFilter(q: Params, name: string): DayFilter[] {
  const out: DayFilter[] = [];
  for (const op of ['', '<', '>'] as const) {
    const v = one(q, `${name}${op}`, 32);
    if (v === undefined) continue;
    const m = /^(\d{4}-\d{2}-\d{2})/.exec(v);
    const d = m ? new Date(`${m[1]}T00:00:00Z`) : new Date(NaN);
    if (Number.isNaN(d.getTime())) throw badParam(`${name}${op} must be a date (YYYY-MM-DD)`);
    out.push({ op: op === '' ? '=' : op, day: d });
  }
  return out;
}

async function list(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const q = req.query as Params;
  const page = pageOf(q);
  const to = one(q, 'To');
  const from = one(q, 'From');
  const status = one(q, 'Status', 32);
  if (status !== undefined && !(TWILIO_CALL_STATUSES as readonly string[]).includes(status)) throw badParam(`Status must be one of ${TWILIO_CALL_STATUSES.join(', ')}`);
  const parent = one(q, 'ParentCallSid', 64);
  const starts = dateFilter(q, 'StartTime');
  const ends = dateFilter(q, 'EndTime');
  const filter: TwilioCallFilter = {
    ...(to ? { to: addressOf('To', to).target } : {}),
    ...(from ? { from: addressOf('From', from).target } : {}),
    ...(status ? { status: status as TwilioCallStatus } : {}),
    ...(parent !== undefined ? { parentId: fromSid('CA', parent) ?? EMPTY_UUID } : {}),
    started: starts,
    ended: ends,
  };
  const rows = await twilioListsRepo(ctx.db).calls(auth.customerId, filter, { offset: page.offset, limit: page.pageSize + 1 });
  res.json(pageJson(req, 'calls', page, rows.map(twilioCallJson)));
}

async function update(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const p = req.body as Params;
  const c = await owned(ctx, auth.customerId, String(req.params.CallSid));
  const status = one(p, 'Status', 32);
  if (status !== undefined && status !== 'completed' && status !== 'canceled') throw badParam('Status must be completed or canceled', 21218);
  const redirect = twimlAction(ctx, p);
  const callback = callbackOf(ctx, p);
  if (!status && !redirect && !callback) throw badParam('Give Url, Twiml, Status or StatusCallback');
  if (status) {
    if (c.status === 'hangup') throw badParam('Call is not in-progress. Cannot redirect.', 21220);
    // canceled ends only a call not yet answered; an answered one is left as it is (Twilio)
    if (status === 'completed' || c.status === 'dialing' || c.status === 'ringing') {
      const now = await hangupCall(ctx, c);
      res.json(twilioCallJson(now));
      return;
    }
    res.json(twilioCallJson(c));
    return;
  }
  if (c.status === 'hangup') throw badParam('Call is not in-progress. Cannot redirect.', 21220);
  // a call just answered may not have its flow yet: the redirect waits for it (flow-wait.ts, issue 54)
  const live = redirect ? await withFlow(ctx, c, res) : c;
  if (!live || (redirect && (live.status !== 'progressing' || live.activeflow_id === EMPTY_UUID))) throw badParam('Call is not in-progress. Cannot redirect.', 21220);
  if (callback) {
    await callsRepo(ctx.db).mergeData(c.id, { twilio: callback });
  }
  if (redirect) {
    const bus = commandBus(ctx);
    const node = (await bus.activeflowOwner(live.activeflow_id)) ?? (await bus.callOwner(c.id));
    if (!node) throw badParam('Call is not in-progress. Cannot redirect.', 21220);
    await bus.toNode(node, { type: 'activeflow.redirect', activeflowId: live.activeflow_id, actions: [redirect] });
  }
  res.json(twilioCallJson(live));
}

/** Deletes an ended call's record (204), as Twilio; a live one is 20009 (our HTTP status: 409). */
async function remove(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const c = await owned(ctx, authOf(res.locals).customerId, String(req.params.CallSid));
  if (c.status !== 'hangup') throw new TwilioError(409, 20009, 'Cannot delete this resource before it is complete: the call is still in progress');
  if (!(await deleteEndedCall(ctx, c))) throw notFound(`Call ${String(req.params.CallSid).slice(0, 40)}`);
  res.status(204).end();
}

type Handler = (ctx: AppContext, req: Request, res: Response) => Promise<void>;

export function callsRouter(ctx: AppContext): Router {
  const r = Router({ mergeParams: true });
  const h = (fn: Handler) => (req: Request, res: Response, next: (e?: unknown) => void) => void fn(ctx, req, res).catch(next);
  r.post('/Calls{.json}', h(create));
  r.get('/Calls{.json}', h(list));
  r.get(
    '/Calls/:CallSid.json',
    h(async (c, req, res) => void res.json(twilioCallJson(await owned(c, authOf(res.locals).customerId, String(req.params.CallSid))))),
  );
  r.post('/Calls/:CallSid.json', h(update));
  r.delete('/Calls/:CallSid.json', h(remove));
  return r;
}
