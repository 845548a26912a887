/**
 * /transcribes: live transcription of a call or a conference (its whole mix), or transcription of a recording (docs/speech.md).
 * A live one is written here (progressing) and started by the node that owns the call; a
 * recording's goes to any node (shared queue). Segments land in /transcripts.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { ApiError, invalidArgument, notFound, stateInvalid } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { ORIGINATE_QUEUE } from '../../core/queue/contracts';
import { callsRepo } from '../../core/repos/calls';
import { flowsRepo } from '../../core/repos/flows';
import { recordingsReadRepo } from '../../core/repos/recordings';
import { transcribeJson, transcribesRepo, type TranscribeRow } from '../../core/repos/transcribes';
import { EventPublisher } from '../../core/events/bus';
import { publishResourceEvent, type EventType } from '../../core/events/catalogue';
import { checkStt } from '../../core/speech/providers';
import { nodeOf } from '../../core/speech/route';
import '../../core/speech/commands';
import { commandBus } from '../calls/bus';
import type { AppContext } from '../context';
import { legacyTime, listOf, uuidOut } from './schemas';

const tag = 'Transcribe';
export const transcribeSchema = z.object({
  id: uuidOut(), customer_id: uuidOut(), activeflow_id: uuidOut(), on_end_flow_id: uuidOut(),
  reference_type: z.enum(['call', 'confbridge', 'recording']), reference_id: uuidOut(), status: z.enum(['progressing', 'done']),
  language: z.string(), direction: z.enum(['in', 'out', 'both']), provider: z.string(),
  tm_create: legacyTime(), tm_update: legacyTime(), tm_delete: legacyTime(),
});
const missing = () => notFound('RESOURCE_NOT_FOUND', 'transcribe not found');

async function publish(ctx: AppContext, type: EventType, row: TranscribeRow): Promise<void> {
  await publishResourceEvent(new EventPublisher(ctx.redis), type, transcribeJson(row)).catch((err: Error) => ctx.logger.warn({ err: err.message }, `could not publish ${type}`));
}

const createBody = z.object({
  reference_type: z.enum(['call', 'confbridge', 'recording']),
  reference_id: uuid(),
  language: z.string().max(35).optional().describe('BCP-47; default en-US'),
  direction: z.enum(['in', 'out', 'both']).optional().describe('default both'),
  provider: z.string().max(64).optional().describe("'' or pocketsphinx (offline, default), deepgram"),
  on_end_flow_id: uuid().optional(),
  phrases: z.array(z.string().min(1).max(200)).max(100).optional().describe('platform extension: expected phrases (much better offline recognition); live calls only'),
});

export const routes = [
  defineRoute({
    method: 'post', path: '/transcribes', tag, summary: 'Transcribe a live call, or a recording', permission: 'manager',
    body: createBody, response: transcribeSchema,
    handler: async ({ ctx, auth, body }) => {
      const cid = auth.customerId;
      const { provider, language } = checkStt(body.provider, body.language);
      if (body.phrases && body.phrases.every((p) => !/[a-z]/i.test(p))) throw invalidArgument('phrases need words', [{ field: 'phrases' }]);
      const onEnd = body.on_end_flow_id ?? EMPTY_UUID;
      if (onEnd !== EMPTY_UUID && !(await flowsRepo(ctx.db).getOwned(cid, onEnd))) {
        throw new ApiError('FLOW_NOT_FOUND', 'on_end_flow_id: flow not found', { details: [{ field: 'on_end_flow_id' }] });
      }
      const repo = transcribesRepo(ctx.db);
      const fields = { customer_id: cid, reference_id: body.reference_id, language, provider, direction: body.direction ?? 'both', on_end_flow_id: onEnd } as const;
      if (body.reference_type === 'recording') {
        const rec = await recordingsReadRepo(ctx.db).get(cid, body.reference_id);
        if (!rec) throw notFound('RECORDING_NOT_FOUND', 'recording not found');
        if (rec.status !== 'ended') throw stateInvalid(`the recording is ${rec.status}; transcribe it once it has ended`);
        // voipbin: a recording already transcribed in this language gives the existing transcribe
        const existing = (await repo.list(cid, { pageSize: 100, pageToken: '' }, { reference_id: rec.id })).result.find((t) => t.language === language);
        if (existing) return transcribeJson(existing);
        const row = await repo.create({ ...fields, reference_type: 'recording' });
        await publish(ctx, 'transcribe_created', row);
        await commandBus(ctx).enqueue(ORIGINATE_QUEUE, { type: 'transcribe.recording', transcribeId: row.id });
        return transcribeJson(row);
      }
      if (body.reference_type === 'confbridge') {
        const conf = await ctx.db('conferences').where({ id: body.reference_id, customer_id: cid }).whereNull('tm_delete').first().catch(() => undefined);
        if (!conf) throw notFound('RESOURCE_NOT_FOUND', 'conference not found');
        if (conf.status !== 'progressing') throw stateInvalid(`the conference is ${conf.status}, not progressing`);
        if (await repo.progressingOn(conf.id)) throw new ApiError('ALREADY_EXISTS', 'the conference is already being transcribed; stop that transcribe first');
        const node = await nodeOf(commandBus(ctx), ctx.redis, ctx.config.redisKeyPrefix, 'confbridge', conf.id);
        if (!node) throw stateInvalid('the conference is not hosted on any live node');
        const row = await repo.create({ ...fields, reference_type: 'confbridge' });
        await publish(ctx, 'transcribe_created', row);
        await commandBus(ctx).toNode(node, { type: 'transcribe.start', transcribeId: row.id, callId: conf.id, phrases: body.phrases });
        return transcribeJson(row);
      }
      const call = await callsRepo(ctx.db).getOwned(cid, body.reference_id);
      if (!call) throw new ApiError('CALL_NOT_FOUND', 'call not found', { details: [{ field: 'reference_id' }] });
      if (call.status !== 'progressing') throw new ApiError('CALL_STATE_INVALID', `the call is ${call.status}, not progressing`);
      if (await repo.progressingOn(call.id)) throw new ApiError('ALREADY_EXISTS', 'the call is already being transcribed; stop that transcribe first');
      const node = await commandBus(ctx).callOwner(call.id);
      if (!node) throw new ApiError('CALL_NOT_FOUND', 'the call is not live on any node');
      const row = await repo.create({ ...fields, reference_type: 'call' });
      await publish(ctx, 'transcribe_created', row);
      await commandBus(ctx).toNode(node, { type: 'transcribe.start', transcribeId: row.id, callId: call.id, phrases: body.phrases });
      return transcribeJson(row);
    },
  }),
  defineRoute({
    method: 'get', path: '/transcribes', tag, summary: 'List transcribes (resource_id or reference_id: of one call, conference or recording)', permission: 'manager',
    paginated: true,
    query: z.object({
      resource_id: uuid().optional(), reference_id: uuid().optional(), reference_type: z.enum(['call', 'confbridge', 'recording', 'unknown']).optional(),
      page_size: z.string().optional(), page_token: z.string().optional(),
    }),
    response: listOf(transcribeSchema),
    handler: async ({ ctx, auth, page, query }) => {
      const ref = query.resource_id ?? query.reference_id;
      const p = await transcribesRepo(ctx.db).list(auth.customerId, page, ref ? { reference_id: ref } : {});
      const result = query.reference_type ? p.result.filter((t) => t.reference_type === query.reference_type) : p.result;
      return { result: result.map(transcribeJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get', path: '/transcribes/:id', tag, summary: 'Get a transcribe', permission: 'manager', params: idParams, response: transcribeSchema,
    handler: async ({ ctx, auth, params }) => {
      const t = await transcribesRepo(ctx.db).get(auth.customerId, params.id);
      if (!t) throw missing();
      return transcribeJson(t);
    },
  }),
  defineRoute({
    method: 'post', path: '/transcribes/:id/stop', tag, summary: 'Stop a live transcribe (its last segments are still stored)', permission: 'manager',
    params: idParams, response: transcribeSchema,
    handler: async ({ ctx, auth, params }) => {
      const repo = transcribesRepo(ctx.db);
      const t = await repo.get(auth.customerId, params.id);
      if (!t) throw missing();
      if (t.status === 'done') throw stateInvalid('the transcribe is already done');
      if (t.reference_type === 'recording') throw stateInvalid('a recording transcribe cannot be stopped; it ends by itself');
      const node = await nodeOf(commandBus(ctx), ctx.redis, ctx.config.redisKeyPrefix, t.reference_type, t.reference_id);
      if (node) {
        await commandBus(ctx).toNode(node, { type: 'transcribe.stop', transcribeId: t.id, callId: t.reference_id });
        return transcribeJson(t);
      }
      // nobody runs it any more (the call ended with its node): end it here
      const done = await repo.finish(t.id);
      if (done) await publish(ctx, 'transcribe_done', done);
      return transcribeJson(done ?? t);
    },
  }),
  defineRoute({
    method: 'delete', path: '/transcribes/:id', tag, summary: 'Delete a transcribe and its transcripts (a live one is stopped first)', permission: 'manager',
    params: idParams, response: transcribeSchema,
    handler: async ({ ctx, auth, params }) => {
      const repo = transcribesRepo(ctx.db);
      const t = await repo.get(auth.customerId, params.id);
      if (!t) throw missing();
      if (t.status === 'progressing' && t.reference_type !== 'recording') {
        const node = await nodeOf(commandBus(ctx), ctx.redis, ctx.config.redisKeyPrefix, t.reference_type, t.reference_id);
        if (node) await commandBus(ctx).toNode(node, { type: 'transcribe.stop', transcribeId: t.id, callId: t.reference_id });
        else {
          const done = await repo.finish(t.id);
          if (done) await publish(ctx, 'transcribe_done', done);
        }
      }
      // a recording's transcription still running finishes in the background, out of sight
      const deleted = await repo.softDelete(auth.customerId, t.id);
      if (!deleted) throw missing();
      return transcribeJson(deleted);
    },
  }),
];
