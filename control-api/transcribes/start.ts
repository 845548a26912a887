/**
 * Starting and stopping a transcribe, shared by POST /transcribes, POST /service_agents/transcribes
 * and POST /conferences/{id}/transcribe_start|transcribe_stop. A live one (a call, or a conference's
 * whole mix) is written here (progressing) and started by the node that owns the call or hosts the
 * conference; a recording's goes to any node (shared queue). `reachable` narrows what the caller may
 * name (a service agent: its own calls and their recordings); anything else is not found.
 */
import { z } from 'zod';
import { uuid } from '../route';
import { ApiError, invalidArgument, notFound, stateInvalid } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { ORIGINATE_QUEUE } from '../../core/commands/contracts';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import { flowsRepo } from '../../core/repos/flows';
import { recordingsReadRepo } from '../../core/repos/recordings';
import { transcribeJson, transcribesRepo, type TranscribeRow } from '../../core/repos/transcribes';
import { eventPublisher } from '../../core/events/bus';
import { publishResourceEvent, type EventType } from '../../core/events/catalogue';
import { checkStt } from '../../core/speech/providers';
import { nodeOf } from '../../core/speech/route';
import { commandBus } from '../calls/bus';
import type { AppContext } from '../context';
import { conferencesRepo } from '../../core/repos/conferences';

export const transcribeBody = z.object({
  reference_type: z.enum(['call', 'confbridge', 'recording']),
  reference_id: uuid(),
  language: z.string().max(35).optional().describe('BCP-47; default en-US'),
  direction: z.enum(['in', 'out', 'both']).optional().describe('default both'),
  provider: z.string().max(64).optional().describe("'' or pocketsphinx (offline, default), deepgram"),
  on_end_flow_id: uuid().optional(),
  phrases: z.array(z.string().min(1).max(200)).max(100).optional().describe('platform extension: expected phrases (much better offline recognition); live calls only'),
});
export type TranscribeBody = z.infer<typeof transcribeBody>;

/** What the caller may transcribe beyond its customer's ownership (service agents); all when absent. */
export interface Reachable {
  call(c: CallRow): boolean;
  /** The recording's reference (a call id) is reachable. */
  recordingOf(referenceType: string, referenceId: string): Promise<boolean>;
  confbridge: boolean;
}

export async function publishTranscribe(ctx: AppContext, type: EventType, row: TranscribeRow): Promise<void> {
  await publishResourceEvent(eventPublisher(ctx), type, transcribeJson(row)).catch((err: Error) => ctx.logger.warn({ err: err.message }, `could not publish ${type}`));
}

export async function startTranscribe(ctx: AppContext, cid: string, body: TranscribeBody, reachable?: Reachable): Promise<TranscribeRow> {
  const { provider, language } = checkStt(body.provider, body.language, body.reference_type === 'recording');
  if (body.phrases && body.phrases.every((p) => !/[a-z]/i.test(p))) throw invalidArgument('phrases need words', [{ field: 'phrases' }]);
  const onEnd = body.on_end_flow_id ?? EMPTY_UUID;
  if (onEnd !== EMPTY_UUID && !(await flowsRepo(ctx.db).getOwned(cid, onEnd))) {
    throw new ApiError('FLOW_NOT_FOUND', 'on_end_flow_id: flow not found', { details: [{ field: 'on_end_flow_id' }] });
  }
  const repo = transcribesRepo(ctx.db);
  const fields = { customer_id: cid, reference_id: body.reference_id, language, provider, direction: body.direction ?? 'both', on_end_flow_id: onEnd } as const;
  if (body.reference_type === 'recording') {
    const rec = await recordingsReadRepo(ctx.db).get(cid, body.reference_id);
    if (!rec || (reachable && !(await reachable.recordingOf(rec.reference_type, rec.reference_id)))) throw notFound('RECORDING_NOT_FOUND', 'recording not found');
    if (rec.status !== 'ended') throw stateInvalid(`the recording is ${rec.status}; transcribe it once it has ended`);
    // voipbin: a recording already transcribed in this language (by this provider) gives the existing transcribe
    const existing = (await repo.list(cid, { pageSize: 100, pageToken: '' }, { reference_id: rec.id })).result.find((t) => t.language === language && t.provider === provider);
    if (existing) return existing;
    const row = await repo.create({ ...fields, reference_type: 'recording' });
    await publishTranscribe(ctx, 'transcribe_created', row);
    await commandBus(ctx).enqueue(ORIGINATE_QUEUE, { type: 'transcribe.recording', transcribeId: row.id });
    return row;
  }
  if (body.reference_type === 'confbridge') {
    const conf =
      reachable && !reachable.confbridge
        ? undefined
        : await conferencesRepo(ctx.db)
            .getOwned(cid, body.reference_id)
            .catch(() => null);
    if (!conf) throw notFound('RESOURCE_NOT_FOUND', 'conference not found');
    if (conf.status !== 'progressing') throw stateInvalid(`the conference is ${conf.status}, not progressing`);
    if (await repo.progressingOn(conf.id)) throw new ApiError('ALREADY_EXISTS', 'the conference is already being transcribed; stop that transcribe first');
    const node = await nodeOf(commandBus(ctx), ctx.redis, ctx.config.redisKeyPrefix, 'confbridge', conf.id);
    if (!node) throw stateInvalid('the conference is not hosted on any live node');
    const row = await repo.create({ ...fields, reference_type: 'confbridge' });
    await publishTranscribe(ctx, 'transcribe_created', row);
    await commandBus(ctx).toNode(node, { type: 'transcribe.start', transcribeId: row.id, callId: conf.id, phrases: body.phrases });
    return row;
  }
  const call = await callsRepo(ctx.db).getOwned(cid, body.reference_id);
  if (!call || (reachable && !reachable.call(call))) throw new ApiError('CALL_NOT_FOUND', 'call not found', { details: [{ field: 'reference_id' }] });
  if (call.status !== 'progressing') throw new ApiError('CALL_STATE_INVALID', `the call is ${call.status}, not progressing`);
  if (await repo.progressingOn(call.id)) throw new ApiError('ALREADY_EXISTS', 'the call is already being transcribed; stop that transcribe first');
  const node = await commandBus(ctx).callOwner(call.id);
  if (!node) throw new ApiError('CALL_NOT_FOUND', 'the call is not live on any node');
  const row = await repo.create({ ...fields, reference_type: 'call' });
  await publishTranscribe(ctx, 'transcribe_created', row);
  await commandBus(ctx).toNode(node, { type: 'transcribe.start', transcribeId: row.id, callId: call.id, phrases: body.phrases });
  return row;
}

/** Stops a live transcribe: its node stops it, or, when no node runs it any more, it ends here. */
export async function stopTranscribe(ctx: AppContext, t: TranscribeRow): Promise<TranscribeRow> {
  if (t.status === 'done') throw stateInvalid('the transcribe is already done');
  if (t.reference_type === 'recording') throw stateInvalid('a recording transcribe cannot be stopped; it ends by itself');
  const node = await nodeOf(commandBus(ctx), ctx.redis, ctx.config.redisKeyPrefix, t.reference_type, t.reference_id);
  if (node) {
    await commandBus(ctx).toNode(node, { type: 'transcribe.stop', transcribeId: t.id, callId: t.reference_id });
    return t;
  }
  const done = await transcribesRepo(ctx.db).finish(t.id);
  if (done) await publishTranscribe(ctx, 'transcribe_done', done);
  return done ?? t;
}
