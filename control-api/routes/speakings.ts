/**
 * /speakings: streaming TTS into a live call or conference (docs/speech.md). control-api writes
 * the row (initiating) and tells the node that owns the call (or hosts the conference); the node
 * moves it to active once audio can flow, and to stopped on stop or hangup. Each say takes the
 * next number of its session, so the node speaks texts in the order they were accepted here.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { ApiError, invalidArgument, notFound, stateInvalid } from '../../core/errors';
import { callsRepo } from '../../core/repos/calls';
import { speakingJson, speakingsRepo, type SpeakingRow } from '../../core/repos/speakings';
import { checkTtsLanguage, checkTtsProvider } from '../../core/speech/providers';
import { espeakVoiceFor } from '../../media-engine';
import { nodeOf } from '../../core/speech/route';
import { publishFastSay } from '../../core/speech/fast-say';
import { commandBus } from '../calls/bus';
import type { AppContext, AuthContext } from '../context';
import { legacyTime, listOf, uuidOut } from './schemas';
import { conferencesRepo } from '../../core/repos/conferences';

const tag = 'Speaking';
const speakingSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  reference_type: z.enum(['call', 'confbridge']),
  reference_id: uuidOut(),
  language: z.string(),
  provider: z.string(),
  voice_id: z.string(),
  direction: z.enum(['in', 'out', 'both']),
  status: z.enum(['initiating', 'active', 'stopped']),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});
const missing = () => notFound('RESOURCE_NOT_FOUND', 'speaking not found');

async function owned(ctx: AppContext, auth: AuthContext, id: string): Promise<SpeakingRow> {
  const s = await speakingsRepo(ctx.db).get(auth.customerId, id);
  if (!s) throw missing();
  return s;
}

/** The reference must be this customer's and live (a progressing call, a progressing conference). */
async function checkReference(ctx: AppContext, auth: AuthContext, type: 'call' | 'confbridge', id: string): Promise<void> {
  if (type === 'call') {
    const c = await callsRepo(ctx.db).getOwned(auth.customerId, id);
    if (!c) throw new ApiError('CALL_NOT_FOUND', 'call not found', { details: [{ field: 'reference_id' }] });
    if (c.status !== 'progressing') throw new ApiError('CALL_STATE_INVALID', `the call is ${c.status}, not progressing`);
    return;
  }
  const conf = await conferencesRepo(ctx.db)
    .getOwned(auth.customerId, id)
    .catch(() => null);
  if (!conf) throw notFound('RESOURCE_NOT_FOUND', 'conference not found');
  if (conf.status !== 'progressing') throw stateInvalid(`the conference is ${conf.status}, not progressing`);
}

async function ownerNode(ctx: AppContext, s: Pick<SpeakingRow, 'reference_type' | 'reference_id'>): Promise<string | null> {
  return nodeOf(commandBus(ctx), ctx.redis, ctx.config.redisKeyPrefix, s.reference_type, s.reference_id);
}

const createBody = z.object({
  reference_type: z.enum(['call', 'confbridge']),
  reference_id: uuid(),
  language: z.string().max(35).optional().describe('BCP-47; default en-US'),
  provider: z.string().max(64).optional().describe('provider_a (default, espeak-ng), provider_b, provider_c'),
  voice_id: z.string().max(128).optional().describe("provider voice; 'male', 'female' or a native voice name"),
  direction: z.enum(['', 'in', 'out', 'both']).optional().describe('in: toward the remote party; out: toward the local party; default both'),
});

export const routes = [
  defineRoute({
    method: 'post',
    path: '/speakings',
    tag,
    summary: 'Create a speaking session (streaming TTS) on a live call or conference',
    permission: 'manager',
    body: createBody,
    response: speakingSchema,
    status: 201,
    handler: async ({ ctx, auth, body }) => {
      const provider = checkTtsProvider(body.provider);
      const language = checkTtsLanguage(body.language, espeakVoiceFor);
      if (body.voice_id && !/^[A-Za-z0-9+_-]{1,64}$/.test(body.voice_id)) throw invalidArgument('voice_id has characters a voice name cannot have', [{ field: 'voice_id' }]);
      await checkReference(ctx, auth, body.reference_type, body.reference_id);
      const node = await ownerNode(ctx, body);
      if (!node) {
        throw body.reference_type === 'call' ? new ApiError('CALL_NOT_FOUND', 'the call is not live on any node') : stateInvalid('the conference is not hosted on any live node');
      }
      const row = await speakingsRepo(ctx.db).create({
        customer_id: auth.customerId,
        reference_type: body.reference_type,
        reference_id: body.reference_id,
        language,
        provider,
        voice_id: body.voice_id ?? '',
        direction: body.direction || 'both',
      });
      await commandBus(ctx).toNode(node, { type: 'speaking.start', speakingId: row.id, referenceType: row.reference_type, referenceId: row.reference_id });
      return speakingJson(row);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/speakings',
    tag,
    summary: 'List speaking sessions',
    permission: 'manager',
    paginated: true,
    response: listOf(speakingSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await speakingsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(speakingJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/speakings/:id',
    tag,
    summary: 'Get a speaking session',
    permission: 'manager',
    params: idParams,
    response: speakingSchema,
    handler: async ({ ctx, auth, params }) => speakingJson(await owned(ctx, auth, params.id)),
  }),
  defineRoute({
    method: 'post',
    path: '/speakings/:id/say',
    tag,
    summary: 'Queue text to speak (texts are spoken in the order they are accepted)',
    permission: 'manager',
    params: idParams,
    body: z.object({ text: z.string().min(1).max(5000) }),
    response: speakingSchema,
    handler: async ({ ctx, auth, params, body }) => {
      if (!body.text.trim()) throw invalidArgument('text must not be blank', [{ field: 'text', issue: 'blank' }]);
      // one round trip on the way to first audio: the number is taken unless the session is stopped or not ours
      const next = await speakingsRepo(ctx.db).nextSay(auth.customerId, params.id);
      if (!next) {
        await owned(ctx, auth, params.id);
        throw stateInvalid('the speaking session is stopped');
      }
      const s = next;
      const node = await ownerNode(ctx, s);
      if (!node) {
        await speakingsRepo(ctx.db).setStatus(s.id, 'stopped');
        throw stateInvalid('the speaking session is stopped: its call or conference has ended');
      }
      await publishFastSay(ctx.redis, ctx.config.redisKeyPrefix, node, { speakingId: s.id, seq: next.say_count, text: body.text });
      await commandBus(ctx).toNode(node, { type: 'speaking.say', speakingId: s.id, seq: next.say_count, text: body.text });
      return speakingJson(next);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/speakings/:id/flush',
    tag,
    summary: 'Flush a speaking session: what is being said and every queued text is dropped; the session stays open',
    permission: 'manager',
    params: idParams,
    response: speakingSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = await owned(ctx, auth, params.id);
      if (s.status === 'stopped') throw stateInvalid('the speaking session is stopped');
      // every say accepted so far has a number up to say_count: those are dropped, later ones kept
      const node = await ownerNode(ctx, s);
      if (!node) {
        await speakingsRepo(ctx.db).setStatus(s.id, 'stopped');
        throw stateInvalid('the speaking session is stopped: its call or conference has ended');
      }
      await commandBus(ctx).toNode(node, { type: 'speaking.flush', speakingId: s.id, upTo: s.say_count });
      return speakingJson(s);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/speakings/:id',
    tag,
    summary: 'Delete a speaking session (stopped first if it is not)',
    permission: 'manager',
    params: idParams,
    response: speakingSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = await owned(ctx, auth, params.id);
      if (s.status !== 'stopped') {
        await speakingsRepo(ctx.db).setStatus(s.id, 'stopped');
        const node = await ownerNode(ctx, s);
        if (node) await commandBus(ctx).toNode(node, { type: 'speaking.stop', speakingId: s.id });
      }
      const deleted = await speakingsRepo(ctx.db).softDelete(auth.customerId, s.id);
      if (!deleted) throw missing();
      return speakingJson(deleted);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/speakings/:id/stop',
    tag,
    summary: 'Stop a speaking session (what is queued is dropped)',
    permission: 'manager',
    params: idParams,
    response: speakingSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = await owned(ctx, auth, params.id);
      if (s.status === 'stopped') return speakingJson(s);
      const stopped = (await speakingsRepo(ctx.db).setStatus(s.id, 'stopped')) ?? s;
      const node = await ownerNode(ctx, s);
      if (node) await commandBus(ctx).toNode(node, { type: 'speaking.stop', speakingId: s.id });
      return speakingJson(stopped);
    },
  }),
];
