/**
 * Conferences: list (Status, FriendlyName, DateCreated…, DateUpdated… filters), fetch, update
 * (Status=completed ends the room, the record stays; AnnounceUrl plays to the room: media-app/conference/announce.ts). A Conference is one of our conferences (type
 * conference or connect; the queue subsystem's internal ones are not shown), `CF` + its id. Statuses:
 * starting, or progressing with nobody in the room → `init`; progressing with participants →
 * `in-progress`; terminating / terminated → `completed`. Participants are participants.ts.
 */
import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { conferencesRepo, type ConferenceRow } from '../../core/repos/conferences';
import { twilioListsRepo } from '../../core/repos/twilio-lists';
import { TWILIO_CONFERENCE_STATUSES, type TwilioConferenceStatus } from '../../core/twilio/statuses';
import { accountSid, fromSid, toSid } from '../../core/twilio/sids';
import { conferenceApi } from '../routes/conferences';
import { authOf } from './auth';
import { dateFilter } from './calls';
import { API_VERSION } from './call-json';
import { badParam, notFound } from './errors';
import { one, pageJson, pageOf, rfc2822, type Params } from './params';

export { TWILIO_CONFERENCE_STATUSES };

export function twilioConferenceStatus(c: Pick<ConferenceRow, 'status' | 'conferencecall_ids'>): TwilioConferenceStatus {
  if (c.status === 'terminating' || c.status === 'terminated') return 'completed';
  if (c.status === 'progressing' && c.conferencecall_ids.length > 0) return 'in-progress';
  return 'init';
}

export function conferenceUri(c: Pick<ConferenceRow, 'id' | 'customer_id'>): string {
  return `/${API_VERSION}/Accounts/${accountSid(c.customer_id)}/Conferences/${toSid('CF', c.id)}`;
}

export function twilioConferenceJson(c: ConferenceRow) {
  const base = conferenceUri(c);
  const status = twilioConferenceStatus(c);
  return {
    sid: toSid('CF', c.id),
    account_sid: accountSid(c.customer_id),
    friendly_name: c.name,
    status,
    region: 'us1',
    api_version: API_VERSION,
    date_created: rfc2822(c.tm_create),
    date_updated: rfc2822(c.tm_update ?? c.tm_create),
    reason_conference_ended: null,
    call_sid_ending_conference: null,
    uri: `${base}.json`,
    subresource_uris: { participants: `${base}/Participants.json`, recordings: `${base}/Recordings.json` },
  };
}

/** The customer's conference a CF SID names (Twilio-visible types only), or 20404. */
export async function ownedConference(ctx: AppContext, customerId: string, sid: string): Promise<ConferenceRow> {
  const id = fromSid('CF', sid);
  const c = id ? await conferencesRepo(ctx.db).getOwned(customerId, id) : null;
  if (!c || c.type === 'queue') throw notFound(`Conference ${sid.slice(0, 40)}`);
  return c;
}

async function list(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const q = req.query as Params;
  const page = pageOf(q);
  const status = one(q, 'Status', 32);
  if (status !== undefined && !(TWILIO_CONFERENCE_STATUSES as readonly string[]).includes(status)) throw badParam(`Status must be one of ${TWILIO_CONFERENCE_STATUSES.join(', ')}`);
  const name = one(q, 'FriendlyName', 255);
  const filter = {
    ...(name !== undefined ? { name } : {}),
    ...(status !== undefined ? { status: status as TwilioConferenceStatus } : {}),
    created: dateFilter(q, 'DateCreated'),
    updated: dateFilter(q, 'DateUpdated'),
  };
  const rows = await twilioListsRepo(ctx.db).conferences(auth.customerId, filter, { offset: page.offset, limit: page.pageSize + 1 });
  res.json(pageJson(req, 'conferences', page, rows.map(twilioConferenceJson)));
}

/** AnnounceUrl (http or https, at most 2048 characters) and AnnounceMethod (GET or POST, default POST), or nothing; else 20001. */
export function announceOf(p: Params): { url: string; method: 'GET' | 'POST' } | undefined {
  const url = one(p, 'AnnounceUrl', 2048);
  const method = one(p, 'AnnounceMethod', 16);
  if (url === undefined) {
    if (method !== undefined) throw badParam('AnnounceMethod needs AnnounceUrl');
    return undefined;
  }
  let ok = false;
  try {
    ok = /^https?:$/.test(new URL(url).protocol);
  } catch {
    ok = false;
  }
  if (!ok) throw badParam('AnnounceUrl must be an http or https URL');
  const m = (method ?? 'POST').toUpperCase();
  if (m !== 'GET' && m !== 'POST') throw badParam('AnnounceMethod must be GET or POST');
  return { url, method: m };
}

async function update(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const p = req.body as Params;
  const c = await ownedConference(ctx, auth.customerId, String(req.params.ConferenceSid));
  const status = one(p, 'Status', 32);
  const announcement = announceOf(p);
  if (status === undefined && !announcement) throw badParam('Give Status (completed) or AnnounceUrl');
  if (status !== undefined && status !== 'completed') throw badParam('Status must be completed');
  if (announcement) {
    if (twilioConferenceStatus(c) === 'completed' || c.status !== 'progressing') throw badParam('The conference is not in progress');
    await conferenceApi(ctx).announce(c.id, null, announcement.url, announcement.method);
  }
  if (status === undefined) return void res.json(twilioConferenceJson(c));
  let now = await conferenceApi(ctx).end(auth.customerId, c.id);
  // the host ends it a moment later: answer with the record once it says so (or as it stands after 3 s)
  for (let i = 0; i < 30 && twilioConferenceStatus(now) !== 'completed'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    now = (await conferencesRepo(ctx.db).get(c.id)) ?? now;
  }
  res.json(twilioConferenceJson(now));
}

type Handler = (ctx: AppContext, req: Request, res: Response) => Promise<void>;

export function conferencesRouter(ctx: AppContext): Router {
  const r = Router({ mergeParams: true });
  const h = (fn: Handler) => (req: Request, res: Response, next: (e?: unknown) => void) => void fn(ctx, req, res).catch(next);
  r.get('/Conferences{.json}', h(list));
  r.get(
    '/Conferences/:ConferenceSid.json',
    h(async (c, req, res) => void res.json(twilioConferenceJson(await ownedConference(c, authOf(res.locals).customerId, String(req.params.ConferenceSid))))),
  );
  r.post('/Conferences/:ConferenceSid.json', h(update));
  return r;
}
