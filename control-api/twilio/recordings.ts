/**
 * Recordings: list (all, or a call's: /Calls/{CallSid}/Recordings.json; filters CallSid,
 * ConferenceSid, DateCreated, DateCreated< / DateCreated>), fetch, media (`.wav`, and without a suffix, as Twilio;
 * `.mp3` transcoded by sox on the fly), delete (files first, as DELETE /v1.0/recordings/{id}).
 * Media needs the account's credentials, like every path here. A recording with a file per
 * direction (`*_in.wav` / `*_out.wav`) serves its first file; a mixed one its only file.
 */
import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { EMPTY_UUID } from '../../core/ids';
import { recordingsReadRepo, type RecordingRow } from '../../core/repos/recordings';
import { twilioListsRepo } from '../../core/repos/twilio-lists';
import { storageBackend, viaStorage } from '../../core/storage/backend';
import { accountSid, callSid, fromSid, toSid } from '../../core/twilio/sids';
import { twilioSourceOf } from '../../core/conferences/twilio-recording';
import { authOf } from './auth';
import { dateFilter } from './calls';
import { notFound, TwilioError } from './errors';
import { one, pageJson, pageOf, rfc2822, type Params } from './params';
import { API_VERSION } from './call-json';
import { mp3Of, Mp3Unavailable, type Mp3 } from './mp3';

/** Twilio's source: what made it (a <Conference record>'s says so; else a call's or a conference's API recording, or <Record>). */
function sourceOf(r: RecordingRow, isCall: boolean): string {
  return twilioSourceOf(r) ?? (isCall ? 'StartCallRecordingAPI' : r.reference_type === 'conference' ? 'StartConferenceRecordingAPI' : 'RecordVerb');
}

export function recordingJson(r: RecordingRow) {
  const base = `/${API_VERSION}/Accounts/${accountSid(r.customer_id)}/Recordings/${toSid('RE', r.id)}`;
  const duration = r.tm_start && r.tm_end ? Math.max(0, Math.round((r.tm_end.getTime() - r.tm_start.getTime()) / 1000)) : null;
  const isCall = r.reference_type === 'call' && r.reference_id !== EMPTY_UUID;
  return {
    sid: toSid('RE', r.id),
    account_sid: accountSid(r.customer_id),
    call_sid: isCall ? callSid(r.reference_id) : null,
    conference_sid: r.reference_type === 'conference' && r.reference_id !== EMPTY_UUID ? toSid('CF', r.reference_id) : null,
    date_created: rfc2822(r.tm_create),
    date_updated: rfc2822(r.tm_update ?? r.tm_create),
    start_time: rfc2822(r.tm_start ?? r.tm_create),
    duration: r.status === 'ended' && duration !== null ? String(duration) : '-1',
    channels: 1,
    source: sourceOf(r, isCall),
    // a conference's recording is in-progress while it runs (its REST update can stop it)
    status: r.status === 'ended' ? 'completed' : r.reference_type === 'conference' && r.status !== 'stopping' ? 'in-progress' : 'processing',
    error_code: null,
    price: null,
    price_unit: 'USD',
    encryption_details: null,
    api_version: API_VERSION,
    media_url: `${base}`,
    uri: `${base}.json`,
    subresource_uris: { transcriptions: `${base}/Transcriptions.json` },
  };
}

export async function owned(ctx: AppContext, customerId: string, sid: string): Promise<RecordingRow> {
  const id = fromSid('RE', sid);
  const r = id ? await recordingsReadRepo(ctx.db).get(customerId, id) : null;
  if (!r) throw notFound(`Recording ${sid.slice(0, 40)}`);
  return r;
}

async function list(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const q = req.query as Params;
  const page = pageOf(q);
  const callParam = typeof req.params.CallSid === 'string' ? req.params.CallSid : one(q, 'CallSid', 64);
  const conferenceParam = one(q, 'ConferenceSid', 64);
  const filter = {
    ...(callParam !== undefined ? { callId: fromSid('CA', callParam) ?? EMPTY_UUID } : {}),
    ...(conferenceParam !== undefined ? { conferenceId: fromSid('CF', conferenceParam) ?? EMPTY_UUID } : {}),
    created: dateFilter(q, 'DateCreated'),
  };
  const rows = await twilioListsRepo(ctx.db).recordings(auth.customerId, filter, { offset: page.offset, limit: page.pageSize + 1 });
  res.json(pageJson(req, 'recordings', page, rows.map(recordingJson)));
}

async function media(ctx: AppContext, req: Request, res: Response, format: 'wav' | 'mp3'): Promise<void> {
  const auth = authOf(res.locals);
  const r = await owned(ctx, auth.customerId, String(req.params.RecordingSid));
  const filename = r.filenames[0];
  if (r.status !== 'ended' || !filename) throw new TwilioError(404, 20404, 'The recording has no media yet');
  const files = storageBackend(ctx.config).recordings;
  if (format === 'wav') {
    const obj = await viaStorage(() => files.open(filename));
    if (!obj) throw notFound(`Recording media ${toSid('RE', r.id)}`);
    res.setHeader('Content-Type', 'audio/x-wav');
    res.setHeader('Content-Length', String(obj.size));
    obj.stream.on('error', () => res.destroy()).pipe(res);
    return;
  }
  const local = await viaStorage(() => files.localCopy(filename));
  if (!local) throw notFound(`Recording media ${toSid('RE', r.id)}`);
  // a client that leaves while sox starts: sox is ended as soon as it has (nothing reads its output)
  let gone = false;
  const onGone = () => (gone = true);
  res.once('close', onGone);
  let mp3: Mp3;
  try {
    mp3 = await mp3Of(local.path);
  } catch (err) {
    void local.release();
    if (err instanceof Mp3Unavailable) throw new TwilioError(503, 20503, err.message);
    throw err;
  } finally {
    res.off('close', onGone);
  }
  void mp3.ended.then(() => local.release());
  if (gone || res.destroyed) return mp3.kill();
  res.on('close', () => mp3.kill());
  res.setHeader('Content-Type', 'audio/mpeg');
  mp3.stream.pipe(res);
}

async function remove(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  await removeRecording(ctx, auth.customerId, await owned(ctx, auth.customerId, String(req.params.RecordingSid)));
  res.status(204).end();
}

/** Deletes a recording: its files, then its row. */
export async function removeRecording(ctx: AppContext, customerId: string, r: RecordingRow): Promise<void> {
  const files = storageBackend(ctx.config).recordings;
  await viaStorage(() => Promise.all(r.filenames.map((f) => files.remove(f))));
  if (!(await recordingsReadRepo(ctx.db).softDelete(customerId, r.id))) throw notFound(`Recording ${toSid('RE', r.id)}`);
}

type Handler = (ctx: AppContext, req: Request, res: Response) => Promise<void>;

export function recordingsRouter(ctx: AppContext): Router {
  const r = Router({ mergeParams: true });
  const h = (fn: Handler) => (req: Request, res: Response, next: (e?: unknown) => void) => void fn(ctx, req, res).catch(next);
  r.get('/Recordings{.json}', h(list));
  r.get('/Calls/:CallSid/Recordings{.json}', h(list));
  r.get(
    '/Recordings/:RecordingSid.json',
    h(async (c, req, res) => void res.json(recordingJson(await owned(c, authOf(res.locals).customerId, String(req.params.RecordingSid))))),
  );
  r.get(
    '/Recordings/:RecordingSid.wav',
    h((c, req, res) => media(c, req, res, 'wav')),
  );
  r.get(
    '/Recordings/:RecordingSid.mp3',
    h((c, req, res) => media(c, req, res, 'mp3')),
  );
  r.get(
    '/Recordings/:RecordingSid',
    h((c, req, res) => media(c, req, res, 'wav')),
  );
  r.delete('/Recordings/:RecordingSid{.json}', h(remove));
  return r;
}
