/**
 * Transcriptions (docs/twilio.md "REST resources"): the Transcribes of recordings (what <Record
 * transcribe> and POST /v1.0/transcribes on a recording make), as Twilio's Transcription: list (the
 * account's, or a recording's: /Recordings/{RecordingSid}/Transcriptions.json), fetch, delete (a soft
 * delete, as DELETE /v1.0/transcribes/{id}). `transcription_text` is the transcript segments in order;
 * status `in-progress` while recognition runs, then `completed`.
 */
import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { EMPTY_UUID } from '../../core/ids';
import { recordingsReadRepo } from '../../core/repos/recordings';
import { transcribesRepo, type TranscribeRow } from '../../core/repos/transcribes';
import { transcriptMessages } from '../../core/repos/transcripts';
import { accountSid, fromSid, toSid } from '../../core/twilio/sids';
import { authOf } from './auth';
import { notFound } from './errors';
import { pageJson, pageOf, rfc2822, type Params } from './params';
import { API_VERSION } from './call-json';

async function textOf(ctx: AppContext, r: TranscribeRow): Promise<string> {
  return (await transcriptMessages(ctx.db, r.customer_id, r.id))
    .map((x) => x.trim())
    .filter(Boolean)
    .join(' ');
}

async function transcriptionJson(ctx: AppContext, r: TranscribeRow) {
  const sid = toSid('TR', r.id);
  const rec = await recordingsReadRepo(ctx.db).get(r.customer_id, r.reference_id);
  const duration = rec?.tm_start && rec.tm_end ? String(Math.max(0, Math.round((rec.tm_end.getTime() - rec.tm_start.getTime()) / 1000))) : null;
  return {
    sid,
    account_sid: accountSid(r.customer_id),
    recording_sid: toSid('RE', r.reference_id),
    status: r.status === 'done' ? 'completed' : 'in-progress',
    transcription_text: r.status === 'done' ? await textOf(ctx, r) : null,
    duration,
    type: 'fast',
    price: null,
    price_unit: 'USD',
    api_version: API_VERSION,
    date_created: rfc2822(r.tm_create),
    date_updated: rfc2822(r.tm_update ?? r.tm_create),
    uri: `/${API_VERSION}/Accounts/${accountSid(r.customer_id)}/Transcriptions/${sid}.json`,
  };
}

async function owned(ctx: AppContext, customerId: string, sid: string): Promise<TranscribeRow> {
  const id = fromSid('TR', sid);
  const r = id ? await transcribesRepo(ctx.db).get(customerId, id) : null;
  if (!r || r.reference_type !== 'recording') throw notFound(`Transcription ${sid.slice(0, 40)}`);
  return r;
}

async function list(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const page = pageOf(req.query as Params);
  const recordingSid = typeof req.params.RecordingSid === 'string' ? req.params.RecordingSid : undefined;
  const filter = recordingSid !== undefined ? { recordingId: fromSid('RE', recordingSid) ?? EMPTY_UUID } : {};
  const rows = await transcribesRepo(ctx.db).ofRecordings(auth.customerId, filter, { offset: page.offset, limit: page.pageSize + 1 });
  const items = await Promise.all(rows.map((r) => transcriptionJson(ctx, r)));
  res.json(pageJson(req, 'transcriptions', page, items));
}

type Handler = (ctx: AppContext, req: Request, res: Response) => Promise<void>;

export function transcriptionsRouter(ctx: AppContext): Router {
  const r = Router({ mergeParams: true });
  const h = (fn: Handler) => (req: Request, res: Response, next: (e?: unknown) => void) => void fn(ctx, req, res).catch(next);
  r.get('/Transcriptions{.json}', h(list));
  r.get('/Recordings/:RecordingSid/Transcriptions{.json}', h(list));
  const fetchOne: Handler = async (c, req, res) => void res.json(await transcriptionJson(c, await owned(c, authOf(res.locals).customerId, String(req.params.TranscriptionSid))));
  r.get('/Transcriptions/:TranscriptionSid{.json}', h(fetchOne));
  r.get('/Recordings/:RecordingSid/Transcriptions/:TranscriptionSid{.json}', h(fetchOne));
  const remove: Handler = async (c, req, res) => {
    const auth = authOf(res.locals);
    const t = await owned(c, auth.customerId, String(req.params.TranscriptionSid));
    if (!(await transcribesRepo(c.db).softDelete(auth.customerId, t.id))) throw notFound(`Transcription ${toSid('TR', t.id)}`);
    res.status(204).end();
  };
  r.delete('/Transcriptions/:TranscriptionSid{.json}', h(remove));
  r.delete('/Recordings/:RecordingSid/Transcriptions/:TranscriptionSid{.json}', h(remove));
  return r;
}
