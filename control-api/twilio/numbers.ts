/**
 * IncomingPhoneNumbers: our numbers (list with PhoneNumber / FriendlyName filters, fetch, update).
 * The Twilio fields live in the number's metadata (`metadata.twilio`: voice_url, voice_method,
 * voice_fallback_url, voice_fallback_method, status_callback, status_callback_method, flow_id). Setting
 * VoiceUrl makes the number's call flow a managed flow (listed, named "twilio VoiceUrl <number>") whose
 * one action is `twiml` {url, method, fallback_url, fallback_method};
 * changing it rewrites that action; an empty VoiceUrl unlinks the number and deletes the managed flow.
 * Numbers are bought or claimed with POST /v1.0/numbers; creating one here is refused (20004).
 */
import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { EMPTY_UUID } from '../../core/ids';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo, type NumberRow } from '../../core/repos/numbers';
import { twilioListsRepo } from '../../core/repos/twilio-lists';
import { accountSid, fromSid, toSid } from '../../core/twilio/sids';
import { egressUrlProblem } from '../egress-field';
import { authOf } from './auth';
import { badParam, notFound, TwilioError } from './errors';
import { httpUrl, one, oneOf, pageJson, pageOf, rfc2822, type Params } from './params';
import { API_VERSION } from './call-json';

export interface NumberTwilio {
  voice_url: string;
  voice_method: 'GET' | 'POST';
  voice_fallback_url: string;
  voice_fallback_method: 'GET' | 'POST';
  status_callback: string;
  status_callback_method: 'GET' | 'POST';
  flow_id: string;
}

export function numberTwilio(n: Pick<NumberRow, 'metadata'>): NumberTwilio {
  const t = (n.metadata?.twilio ?? {}) as Partial<Record<keyof NumberTwilio, unknown>>;
  const s = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    voice_url: s(t.voice_url),
    voice_method: t.voice_method === 'GET' ? 'GET' : 'POST',
    voice_fallback_url: s(t.voice_fallback_url),
    voice_fallback_method: t.voice_fallback_method === 'GET' ? 'GET' : 'POST',
    status_callback: s(t.status_callback),
    status_callback_method: t.status_callback_method === 'GET' ? 'GET' : 'POST',
    flow_id: s(t.flow_id),
  };
}

function numberJson(n: NumberRow) {
  const t = numberTwilio(n);
  const uri = `/${API_VERSION}/Accounts/${accountSid(n.customer_id)}/IncomingPhoneNumbers/${toSid('PN', n.id)}.json`;
  return {
    sid: toSid('PN', n.id),
    account_sid: accountSid(n.customer_id),
    friendly_name: n.name || n.number,
    phone_number: n.number,
    voice_url: t.voice_url || null,
    voice_method: t.voice_method,
    voice_fallback_url: t.voice_fallback_url || null,
    voice_fallback_method: t.voice_fallback_method,
    voice_caller_id_lookup: false,
    voice_application_sid: null,
    status_callback: t.status_callback || null,
    status_callback_method: t.status_callback_method,
    sms_url: null,
    sms_method: 'POST',
    capabilities: { voice: true, sms: false, mms: false, fax: false },
    status: 'in-use',
    origin: n.type === 'virtual' ? 'hosted' : 'twilio',
    beta: false,
    trunk_sid: null,
    emergency_status: n.emergency_enabled ? 'Active' : 'Inactive',
    date_created: rfc2822(n.tm_create),
    date_updated: rfc2822(n.tm_update ?? n.tm_create),
    api_version: API_VERSION,
    uri,
  };
}

async function owned(ctx: AppContext, customerId: string, sid: string): Promise<NumberRow> {
  const id = fromSid('PN', sid);
  const n = id ? await numbersRepo(ctx.db).getOwned(customerId, id) : null;
  if (!n) throw notFound(`IncomingPhoneNumber ${sid.slice(0, 40)}`);
  return n;
}

async function list(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const q = req.query as Params;
  const page = pageOf(q);
  const phone = one(q, 'PhoneNumber', 64);
  const name = one(q, 'FriendlyName', 255);
  const rows = await twilioListsRepo(ctx.db).numbers(auth.customerId, { numberContains: phone, name }, { offset: page.offset, limit: page.pageSize + 1 });
  res.json(pageJson(req, 'incoming_phone_numbers', page, rows.map(numberJson)));
}

/** The managed flow of a VoiceUrl: created, rewritten, or deleted when the url is cleared. */
async function voiceFlow(ctx: AppContext, n: NumberRow, t: NumberTwilio): Promise<{ callFlowId: string; flowId: string }> {
  const flows = flowsRepo(ctx.db);
  const existing = t.flow_id ? await flows.getOwned(n.customer_id, t.flow_id) : null;
  if (!t.voice_url) {
    if (existing) await flows.softDelete(n.customer_id, existing.id);
    return { callFlowId: existing && n.call_flow_id === existing.id ? EMPTY_UUID : n.call_flow_id, flowId: '' };
  }
  const fallback = t.voice_fallback_url ? { fallback_url: t.voice_fallback_url, fallback_method: t.voice_fallback_method } : {};
  const actions = parseActions([{ type: 'twiml', option: { url: t.voice_url, method: t.voice_method, ...fallback } }], { egress: ctx.egress });
  if (existing) {
    await flows.update(n.customer_id, existing.id, { actions });
    return { callFlowId: existing.id, flowId: existing.id };
  }
  const created = await flows.create({ customer_id: n.customer_id, actions, name: `twilio VoiceUrl ${n.number}` });
  return { callFlowId: created.id, flowId: created.id };
}

async function update(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const p = req.body as Params;
  const n = await owned(ctx, auth.customerId, String(req.params.NumberSid));
  const t = numberTwilio(n);
  const name = one(p, 'FriendlyName', 64);
  if (p.VoiceUrl !== undefined) {
    const url = httpUrl(p, 'VoiceUrl', 21502) ?? '';
    const problem = url ? egressUrlProblem(ctx, url) : null;
    if (problem) throw badParam(`VoiceUrl: ${problem}`, 21502);
    t.voice_url = url;
  }
  t.voice_method = oneOf(p, 'VoiceMethod', ['GET', 'POST'] as const, t.voice_method);
  if (p.VoiceFallbackUrl !== undefined) {
    const url = httpUrl(p, 'VoiceFallbackUrl', 21502) ?? '';
    const problem = url ? egressUrlProblem(ctx, url) : null;
    if (problem) throw badParam(`VoiceFallbackUrl: ${problem}`, 21502);
    if (url && !t.voice_url) throw badParam('Cannot set VoiceFallbackUrl without setting Url', 21405);
    t.voice_fallback_url = url;
  }
  t.voice_fallback_method = oneOf(p, 'VoiceFallbackMethod', ['GET', 'POST'] as const, t.voice_fallback_method);
  if (p.StatusCallback !== undefined) {
    const url = httpUrl(p, 'StatusCallback', 21609) ?? '';
    const problem = url ? egressUrlProblem(ctx, url) : null;
    if (problem) throw badParam(`StatusCallback: ${problem}`, 21609);
    t.status_callback = url;
  }
  t.status_callback_method = oneOf(p, 'StatusCallbackMethod', ['GET', 'POST'] as const, t.status_callback_method);
  const flow = await voiceFlow(ctx, n, t);
  t.flow_id = flow.flowId;
  const row = await numbersRepo(ctx.db).update(n.id, {
    call_flow_id: flow.callFlowId,
    ...(name !== undefined ? { name } : {}),
    metadata: { ...n.metadata, twilio: { ...t } },
  });
  if (!row) throw notFound(`IncomingPhoneNumber ${toSid('PN', n.id)}`);
  res.json(numberJson(row));
}

type Handler = (ctx: AppContext, req: Request, res: Response) => Promise<void>;

export function numbersRouter(ctx: AppContext): Router {
  const r = Router({ mergeParams: true });
  const h = (fn: Handler) => (req: Request, res: Response, next: (e?: unknown) => void) => void fn(ctx, req, res).catch(next);
  r.get('/IncomingPhoneNumbers{.json}', h(list));
  r.post('/IncomingPhoneNumbers{.json}', (_req, _res, next) => next(new TwilioError(405, 20004, 'Numbers are bought or claimed with POST /v1.0/numbers; update one here')));
  r.get(
    '/IncomingPhoneNumbers/:NumberSid.json',
    h(async (c, req, res) => void res.json(numberJson(await owned(c, authOf(res.locals).customerId, String(req.params.NumberSid))))),
  );
  r.post('/IncomingPhoneNumbers/:NumberSid.json', h(update));
  return r;
}
