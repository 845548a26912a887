/**
 * Conferences/{CF}/Recordings: a conference's recordings (its <Conference record> one and those of
 * POST /v1.0/conferences/{id}/recording_start): list (DateCreated filters), fetch, update, delete.
 * `Twilio.CURRENT` names the conference's active recording. Update: `Status=stopped` stops the
 * active recording (the room goes on; the answer waits up to 3 s for its end); `in-progress` on the
 * active one changes nothing (it runs); `paused` is a 20001: the platform's conference recording
 * cannot pause. An ended recording cannot be updated (20001).
 */
import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { EMPTY_UUID } from '../../core/ids';
import { recordingsReadRepo, type RecordingRow } from '../../core/repos/recordings';
import { twilioListsRepo } from '../../core/repos/twilio-lists';
import { fromSid, toSid } from '../../core/twilio/sids';
import { conferenceApi } from '../routes/conferences';
import { authOf } from './auth';
import { dateFilter } from './calls';
import { conferenceUri, ownedConference } from './conferences';
import { badParam, notFound } from './errors';
import { one, pageJson, pageOf, type Params } from './params';
import { recordingJson, removeRecording } from './recordings';

const UPDATE_STATUSES = ['stopped', 'paused', 'in-progress'] as const;

function conferenceRecordingJson(r: RecordingRow) {
  const base = `${conferenceUri({ id: r.reference_id, customer_id: r.customer_id })}/Recordings/${toSid('RE', r.id)}`;
  return { ...recordingJson(r), uri: `${base}.json` };
}

/** The conference (20404 unless the account's) and its recording named by the path (20404 unless of that conference). */
async function ownedRecording(ctx: AppContext, req: Request, customerId: string): Promise<RecordingRow> {
  const conf = await ownedConference(ctx, customerId, String(req.params.ConferenceSid));
  const sid = String(req.params.RecordingSid);
  const id = sid === 'Twilio.CURRENT' ? (conf.recording_id !== EMPTY_UUID ? conf.recording_id : null) : fromSid('RE', sid);
  const r = id ? await recordingsReadRepo(ctx.db).get(customerId, id) : null;
  if (!r || r.reference_type !== 'conference' || r.reference_id !== conf.id) throw notFound(`Recording ${sid.slice(0, 40)}`);
  return r;
}

async function list(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const conf = await ownedConference(ctx, auth.customerId, String(req.params.ConferenceSid));
  const q = req.query as Params;
  const page = pageOf(q);
  const rows = await twilioListsRepo(ctx.db).recordings(auth.customerId, { conferenceId: conf.id, created: dateFilter(q, 'DateCreated') }, { offset: page.offset, limit: page.pageSize + 1 });
  res.json(pageJson(req, 'recordings', page, rows.map(conferenceRecordingJson)));
}

async function update(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const r = await ownedRecording(ctx, req, auth.customerId);
  const status = one(req.body as Params, 'Status', 32);
  if (status === undefined || !(UPDATE_STATUSES as readonly string[]).includes(status)) throw badParam(`Status must be ${UPDATE_STATUSES.join(', ')}`);
  if (status === 'paused') throw badParam("Status=paused is not supported here: the platform's conference recording cannot pause (stop it with Status=stopped)");
  if (r.status === 'ended') throw badParam(`The recording has ended; Status=${status} cannot change it`);
  if (status === 'in-progress') return void res.json(conferenceRecordingJson(r));
  const conf = await ownedConference(ctx, auth.customerId, String(req.params.ConferenceSid));
  if (conf.recording_id !== r.id) throw badParam('The recording is not the conference’s active recording');
  await conferenceApi(ctx).recordingStop(auth.customerId, conf.id);
  // the host ends it a moment later: answer with the row once it says so (or as it stands after 3 s)
  let now = r;
  for (let i = 0; i < 30 && now.status !== 'ended'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    now = (await recordingsReadRepo(ctx.db).get(auth.customerId, r.id)) ?? now;
  }
  res.json(conferenceRecordingJson(now));
}

type Handler = (ctx: AppContext, req: Request, res: Response) => Promise<void>;

export function conferenceRecordingsRouter(ctx: AppContext): Router {
  const r = Router({ mergeParams: true });
  const h = (fn: Handler) => (req: Request, res: Response, next: (e?: unknown) => void) => void fn(ctx, req, res).catch(next);
  const item = '/Conferences/:ConferenceSid/Recordings/:RecordingSid.json';
  r.get('/Conferences/:ConferenceSid/Recordings{.json}', h(list));
  r.get(
    item,
    h(async (c, req, res) => void res.json(conferenceRecordingJson(await ownedRecording(c, req, authOf(res.locals).customerId)))),
  );
  r.post(item, h(update));
  r.delete(
    item,
    h(async (c, req, res) => {
      const customerId = authOf(res.locals).customerId;
      await removeRecording(c, customerId, await ownedRecording(c, req, customerId));
      res.status(204).end();
    }),
  );
  return r;
}
