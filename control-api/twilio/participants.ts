/**
 * Conferences/{CF…}/Participants: list (those in the room: joining or joined), fetch by CallSid,
 * update Muted / Hold / EndConferenceOnExit / BeepOnExit / AnnounceUrl, delete (kick). A Participant is one of our conferencecalls; its `muted` and
 * `hold` are the participant's call's own mute (`mute_direction` in or both: the room does not hear
 * it) and hold (`metadata.hold`), set through the same commands as `POST /v1.0/calls/{id}/mute|hold`.
 * Coaching (with CallSidToCoach) makes it a whisper to that participant (Coaching=false: heard by all). A participant is named by its
 * CallSid or by its Label. POST (dial a participant in) is participant-create.ts.
 */
import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import { conferencecallsRepo, type ConferencecallRow } from '../../core/repos/conferencecalls';
import type { ConferenceRow } from '../../core/repos/conferences';
import { accountSid, callSid, fromSid, toSid } from '../../core/twilio/sids';
import { commandBus } from '../calls/bus';
import { conferenceApi } from '../routes/conferences';
import { authOf } from './auth';
import { announceOf, conferenceUri, ownedConference } from './conferences';
import { badParam, notFound } from './errors';
import { egressUrlProblem } from '../egress-field';
import { createParticipant } from './participant-create';
import { bool, pageJson, pageOf, rfc2822, type Params } from './params';

const PRESENT = ['joining', 'joined'];

function participantStatus(cc: ConferencecallRow): 'connecting' | 'connected' | 'complete' {
  if (cc.status === 'joining') return 'connecting';
  if (cc.status === 'joined') return 'connected';
  return 'complete';
}

export const isMuted = (call: Pick<CallRow, 'mute_direction'> | null): boolean => call?.mute_direction === 'in' || call?.mute_direction === 'both';
export const isHeld = (call: Pick<CallRow, 'metadata'> | null): boolean => call?.metadata?.hold === true;

export function twilioParticipantJson(conf: ConferenceRow, cc: ConferencecallRow, call: CallRow | null) {
  return {
    account_sid: accountSid(cc.customer_id),
    call_sid: callSid(cc.reference_id),
    conference_sid: toSid('CF', conf.id),
    label: cc.label || null,
    call_sid_to_coach: cc.coach_call_id ? callSid(cc.coach_call_id) : null,
    coaching: Boolean(cc.coach_call_id),
    muted: isMuted(call),
    hold: isHeld(call),
    start_conference_on_enter: cc.start_on_enter,
    end_conference_on_exit: cc.end_on_exit,
    status: participantStatus(cc),
    queue_time: null,
    date_created: rfc2822(cc.tm_create),
    date_updated: rfc2822(cc.tm_update ?? cc.tm_create),
    uri: `${conferenceUri(conf)}/Participants/${callSid(cc.reference_id)}.json`,
  };
}

async function callsOf(ctx: AppContext, ids: string[]): Promise<Map<string, CallRow>> {
  if (ids.length === 0) return new Map();
  const rows = await callsRepo(ctx.db).byIds(ids);
  return new Map(rows.map((r) => [r.id, r]));
}

/** The participant a CallSid (its latest row, present or gone) or a Label (one present) names in the conference, or 20404. */
async function participantOf(ctx: AppContext, conf: ConferenceRow, sid: string): Promise<ConferencecallRow> {
  const callId = fromSid('CA', sid);
  const repo = conferencecallsRepo(ctx.db);
  const row = callId ? await repo.latestOf(conf.customer_id, conf.id, callId) : ((await repo.presentIn(conf.customer_id, conf.id)).find((cc) => cc.label !== '' && cc.label === sid) ?? null);
  if (!row) throw notFound(`Participant ${sid.slice(0, 40)}`);
  return row;
}

async function list(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const conf = await ownedConference(ctx, auth.customerId, String(req.params.ConferenceSid));
  const q = req.query as Params;
  const page = pageOf(q);
  const muted = bool(q, 'Muted');
  const hold = bool(q, 'Hold');
  const coaching = bool(q, 'Coaching');
  // the call's mute and hold are filtered here (not in SQL): a room holds few participants
  const rows = await conferencecallsRepo(ctx.db).presentIn(auth.customerId, conf.id);
  const calls = await callsOf(
    ctx,
    rows.map((r) => r.reference_id),
  );
  const all = rows
    .map((cc) => twilioParticipantJson(conf, cc, calls.get(cc.reference_id) ?? null))
    .filter((p) => (muted === undefined || p.muted === muted) && (hold === undefined || p.hold === hold) && (coaching === undefined || p.coaching === coaching));
  res.json(pageJson(req, 'participants', page, all.slice(page.offset, page.offset + page.pageSize + 1)));
}

async function fetchOne(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const conf = await ownedConference(ctx, auth.customerId, String(req.params.ConferenceSid));
  const cc = await participantOf(ctx, conf, String(req.params.CallSid));
  res.json(twilioParticipantJson(conf, cc, await callsRepo(ctx.db).getOwned(auth.customerId, cc.reference_id)));
}

const UNSUPPORTED_UPDATE = ['WaitUrl', 'WaitMethod'];

/**
 * HoldUrl (with Hold=true): the held participant's music, a WAV or MP3 URL played in a loop, fetched
 * with GET (HoldMethod's default) through the egress policy. Without it, the customer's or the
 * platform's music plays (Twilio's default hold music). A TwiML hold document is not supported.
 */
function holdUrlOf(ctx: AppContext, p: Params, hold: boolean | undefined): string | undefined {
  if (p.HoldUrl === undefined && p.HoldMethod === undefined) return undefined;
  if (hold !== true) throw badParam('HoldUrl needs Hold=true');
  if (p.HoldMethod !== undefined && (typeof p.HoldMethod !== 'string' || p.HoldMethod.toUpperCase() !== 'GET')) throw badParam('HoldMethod: only GET is supported here');
  const url = typeof p.HoldUrl === 'string' ? p.HoldUrl : '';
  if (!/^https?:\/\/[^\s?#]+\.(wav|mp3)([?#]\S*)?$/i.test(url) || url.length > 2048) throw badParam('HoldUrl must be a WAV or MP3 URL (a TwiML hold document is not supported here)');
  const problem = egressUrlProblem(ctx, url);
  if (problem) throw badParam(`HoldUrl: ${problem}`);
  return url;
}

/** The participant's beep (TwiML's: '', 'true', 'false', 'onEnter', 'onExit') with its exit beep on or off. */
function withExitBeep(beep: string, on: boolean): string {
  const enter = beep === 'true' || beep === 'onEnter';
  if (on) return enter ? 'true' : 'onExit';
  return enter ? 'onEnter' : 'false';
}

/** Coaching=true's CallSidToCoach: another participant connected in the same conference; its call id. */
async function coachedCall(ctx: AppContext, conf: ConferenceRow, coach: ConferencecallRow, sid: string | undefined): Promise<string> {
  if (!sid) throw badParam('Coaching=true needs CallSidToCoach');
  const callId = fromSid('CA', sid);
  const other = callId ? await conferencecallsRepo(ctx.db).latestOf(conf.customer_id, conf.id, callId) : null;
  if (!other || other.status !== 'joined') throw badParam(`CallSidToCoach ${sid.slice(0, 40)} is not a participant connected in this conference`);
  if (other.id === coach.id) throw badParam('A participant cannot coach itself');
  return other.reference_id;
}

async function update(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const p = req.body as Params;
  const conf = await ownedConference(ctx, auth.customerId, String(req.params.ConferenceSid));
  let cc = await participantOf(ctx, conf, String(req.params.CallSid));
  for (const n of UNSUPPORTED_UPDATE) if (p[n] !== undefined) throw badParam(`${n} is not supported here`);
  const muted = bool(p, 'Muted');
  const hold = bool(p, 'Hold');
  const holdUrl = holdUrlOf(ctx, p, hold);
  const endOnExit = bool(p, 'EndConferenceOnExit');
  const beepOnExit = bool(p, 'BeepOnExit');
  const coaching = bool(p, 'Coaching');
  const announcement = announceOf(p);
  if (p.CallSidToCoach !== undefined && coaching !== true) throw badParam('CallSidToCoach needs Coaching=true');
  if (muted === undefined && hold === undefined && endOnExit === undefined && beepOnExit === undefined && coaching === undefined && !announcement)
    throw badParam('Give Muted, Hold, Coaching, EndConferenceOnExit, BeepOnExit or AnnounceUrl');
  const call = await callsRepo(ctx.db).getOwned(auth.customerId, cc.reference_id);
  if (cc.status !== 'joined' || !call || call.status !== 'progressing') throw badParam(`Participant is not connected (${participantStatus(cc)})`);
  const before = cc;
  // bad input is 20001 whatever the node: CallSidToCoach checked before what the backend can do
  const coached = coaching ? await coachedCall(ctx, conf, cc, typeof p.CallSidToCoach === 'string' ? p.CallSidToCoach : undefined) : null;
  const bus = commandBus(ctx);
  if (endOnExit !== undefined || beepOnExit !== undefined) {
    // the room reads the row when the participant leaves
    const patch = { ...(endOnExit !== undefined ? { end_on_exit: endOnExit } : {}), ...(beepOnExit !== undefined ? { beep: withExitBeep(cc.beep, beepOnExit) } : {}) };
    cc = (await conferencecallsRepo(ctx.db).setExit(cc.id, patch)) ?? cc;
  }
  if (coaching !== undefined) cc = await conferenceApi(ctx).coach(auth.customerId, cc.id, coached);
  // an attribute changed (not mute or hold: they have their own events): participant-modify
  if (cc.end_on_exit !== before.end_on_exit || cc.beep !== before.beep || cc.coach_call_id !== before.coach_call_id) await conferenceApi(ctx).modified(conf.id, cc.id);
  const send = async (command: Parameters<typeof bus.toCallOwner>[0]) => {
    if (!(await bus.toCallOwner(command))) throw badParam('Participant is not connected');
  };
  if (announcement) await conferenceApi(ctx).announce(conf.id, cc.id, announcement.url, announcement.method);
  if (muted !== undefined) await send({ type: 'call.mute', callId: call.id, direction: 'in', on: muted });
  if (hold !== undefined) await send({ type: 'call.hold', callId: call.id, on: hold, ...(holdUrl !== undefined ? { music: holdUrl } : {}) });
  // the node applies them a moment later: answer with the call as it then stands (at most 3 s)
  let now: CallRow = call;
  for (let i = 0; i < 30; i++) {
    if ((muted === undefined || isMuted(now) === muted) && (hold === undefined || isHeld(now) === hold)) break;
    await new Promise((r) => setTimeout(r, 100));
    now = (await callsRepo(ctx.db).getOwned(auth.customerId, call.id)) ?? now;
  }
  res.json(twilioParticipantJson(conf, cc, now));
}

async function remove(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const conf = await ownedConference(ctx, auth.customerId, String(req.params.ConferenceSid));
  const cc = await participantOf(ctx, conf, String(req.params.CallSid));
  if (!PRESENT.includes(cc.status)) throw notFound(`Participant ${String(req.params.CallSid).slice(0, 40)}`);
  await conferenceApi(ctx).kick(auth.customerId, cc.id);
  res.status(204).end();
}

type Handler = (ctx: AppContext, req: Request, res: Response) => Promise<void>;

export function participantsRouter(ctx: AppContext): Router {
  const r = Router({ mergeParams: true });
  const h = (fn: Handler) => (req: Request, res: Response, next: (e?: unknown) => void) => void fn(ctx, req, res).catch(next);
  const base = '/Conferences/:ConferenceSid/Participants';
  r.get(`${base}{.json}`, h(list));
  r.post(`${base}{.json}`, h(createParticipant));
  r.get(`${base}/:CallSid.json`, h(fetchOne));
  r.post(`${base}/:CallSid.json`, h(update));
  r.delete(`${base}/:CallSid.json`, h(remove));
  return r;
}
