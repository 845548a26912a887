/**
 * /ais: AI configurations (prompt, RAG, voice, STT/TTS, tools, engine). The engine key is kept
 * server-side and shown masked; every init_prompt change writes a prompt history entry
 * (/ais/{id}/prompt_histories, read-only).
 */
import { z } from 'zod';
import { defineRoute, idParams, text, uuid } from '../route';
import { ApiError, invalidArgument, notFound } from '../../core/errors';
import { aisRepo, aiJson, promptHistoryJson, type AiInput } from '../../core/repos/ais';
import { aicallsRepo, participantJson } from '../../core/repos/ai-calls';
import { ragsRepo } from '../../core/repos/rags';
import { API_TOOL_NAMES } from '../../core/ai/tools';
import { listOfShape, publish, shape } from '../../core/ai/api';
import type { AppContext } from '../context';
import { assertEgressUrl } from '../egress-field';
import { checkTurnParameter, VAD_ENGINES } from '../../core/ai/turns';
import { checkEngineModel, checkSttType, checkTtsType, checkVoiceParameter, sttFallbackOf } from '../../core/speech/voices';
import { checkLlmParameter } from '../../core/llm/fallback';
import { checkGreetingParameter } from '../../core/speech/s2s-vendors';
import { EMPTY_UUID } from '../../core/ids';
import { creatorOf } from './ais-versions';
import { AI_VERSIONED_FIELDS, type AiRow } from '../../core/db/rows/ais';

/**
 * An AI's JSON (aiJson), in its key order (the OpenAPI document lists them so): the versioned fields,
 * with the AI's own state beside the field it belongs to, between the ids and the bookkeeping.
 */
export const AI_FIELDS: string[] = [
  'id',
  'customer_id',
  ...AI_VERSIONED_FIELDS.flatMap((f): (keyof AiRow)[] => (f === 'type' ? [f, 'is_insight_active'] : f === 'init_prompt' ? [f, 'current_prompt_history_id'] : [f])),
  'direct_hash',
  'tm_create',
  'tm_update',
  'tm_delete',
] satisfies (keyof AiRow)[];
const HISTORY_FIELDS = ['id', 'customer_id', 'ai_id', 'prompt', 'proposal_id', 'tm_create'];
const aiSchema = shape(AI_FIELDS);
/** AIManagerParticipant: one AI's part in one AI call. */
export const participantList = z.object({
  result: z.array(z.object({ ai_id: z.string(), aicall_id: z.string(), tm_create: z.string() })),
  next_page_token: z.string(),
});
const tag = 'AI';
const missing = () => notFound('AI_NOT_FOUND', 'ai not found');

const vad = z.object({
  confidence: z.number().min(0).max(1).optional(),
  start_secs: z.number().min(0).max(30).optional(),
  stop_secs: z.number().min(0).max(30).optional(),
  min_volume: z.number().min(0).max(1).optional(),
  engine: z.enum(VAD_ENGINES).optional().describe("the VAD that finds the caller's turns: silero (default) or webrtc (our extension)"),
});

const fields = {
  detail: text(2048).optional(),
  type: z.enum(['normal', 'insight']).optional(),
  engine_model: z
    .string()
    .regex(/^([a-z0-9-]+\.[A-Za-z0-9._:-]+)?$/, 'must be target.model, e.g. openai.gpt-5')
    .max(200)
    .optional()
    .describe(
      'target.model. Chat targets: openai, gemini, grok (STT -> LLM -> TTS). Our extension of the reference enum, speech-to-speech models that ai_talk streams the call audio to (voice = tts_voice_id; no text session): openai-realtime.<model> (OpenAI Realtime API, e.g. openai-realtime.gpt-realtime), gemini-live.<model> (Gemini Live API, e.g. gemini-live.gemini-2.5-flash-native-audio-preview-09-2025) and deepgram-agent.<think model> (Deepgram Voice Agent API, e.g. deepgram-agent.gpt-4o-mini; parameter.greeting is its Settings greeting).',
    ),
  engine_url: z
    .union([z.literal(''), z.url({ protocol: /^https?$/ }).max(1000)])
    .optional()
    .describe(
      "This server's addition: the base URL of the engine_model's endpoint: OpenAI-compatible (openai.*, grok.*, others), Gemini's API for gemini.* (e.g. https://generativelanguage.googleapis.com). Empty: the vendor's platform settings, then AI_LLM_BASE_URL. parameter.llm_fallback (an engine_model or { engine_model, engine_url, engine_key }) and parameter.llm_first_token_ms name a fallback model (docs/ai.md).",
    ),
  engine_key: text(1000).optional(),
  parameter: z.record(z.string(), z.unknown()).optional(),
  rag_id: z.union([z.literal(''), uuid()]).optional(),
  init_prompt: text(100_000).optional(),
  tts_type: text(64).optional(),
  tts_voice_id: text(255).optional(),
  stt_type: text(64).optional(),
  stt_language: text(35).optional(),
  vad_config: vad.optional(),
  smart_turn_enabled: z.boolean().optional(),
  auto_aicall_audit_enabled: z.boolean().optional(),
  tool_names: z.array(z.enum(API_TOOL_NAMES)).max(50).optional(),
};
const createBody = z.object({ name: z.string().trim().min(1).max(255), ...fields });
const updateBody = z.object({ name: z.string().trim().min(1).max(255).optional(), ...fields });

async function toInput(ctx: AppContext, customerId: string, b: z.infer<typeof updateBody>): Promise<AiInput> {
  assertEgressUrl(ctx, 'engine_url', b.engine_url);
  // a voice, recogniser or engine with no adapter is refused here, never replaced later
  checkTtsType('tts_type', b.tts_type);
  checkSttType('stt_type', b.stt_type);
  sttFallbackOf(b.parameter);
  checkEngineModel('engine_model', b.engine_model);
  checkVoiceParameter(b.parameter);
  // the fallback model is checked like engine_model, its URL like engine_url
  assertEgressUrl(ctx, 'parameter.llm_fallback.engine_url', checkLlmParameter(b.parameter).engineUrl || undefined);
  checkGreetingParameter(b.parameter);
  checkTurnParameter(b.parameter);
  const { rag_id, ...rest } = b;
  const input: AiInput = { ...rest } as AiInput;
  if (rag_id !== undefined) {
    if (rag_id && !(await ragsRepo(ctx.db).get(customerId, rag_id))) throw invalidArgument('rag_id: no such rag', [{ field: 'rag_id', issue: 'not found' }]);
    input.rag_id = rag_id || null;
  }
  return input;
}

const historyParams = z.object({ id: uuid(), history_id: uuid() });

export const routes = [
  defineRoute({
    method: 'post',
    path: '/ais',
    tag,
    summary: 'Create an AI',
    permission: 'manager',
    body: createBody,
    response: aiSchema,
    handler: async ({ ctx, auth, body }) => {
      const ai = await aisRepo(ctx.db).create(auth.customerId, await toInput(ctx, auth.customerId, body), creatorOf(auth));
      const json = aiJson(ai);
      await publish(ctx, 'ai_created', json);
      return json;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/ais',
    tag,
    summary: 'List AIs',
    permission: 'agent',
    paginated: true,
    response: listOfShape(AI_FIELDS),
    handler: async ({ ctx, auth, page }) => {
      const p = await aisRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(aiJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/ais/:id',
    tag,
    summary: 'Get an AI',
    permission: 'agent',
    params: idParams,
    response: aiSchema,
    handler: async ({ ctx, auth, params }) => {
      const ai = await aisRepo(ctx.db).get(auth.customerId, params.id);
      if (!ai) throw missing();
      return aiJson(ai);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/ais/:id',
    tag,
    summary: 'Update an AI',
    permission: 'manager',
    params: idParams,
    body: updateBody,
    response: aiSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const ai = await aisRepo(ctx.db).update(auth.customerId, params.id, await toInput(ctx, auth.customerId, body), EMPTY_UUID, creatorOf(auth));
      if (!ai) throw missing();
      const json = aiJson(ai);
      await publish(ctx, 'ai_updated', json);
      return json;
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/ais/:id',
    tag,
    summary: 'Delete an AI',
    permission: 'manager',
    params: idParams,
    response: aiSchema,
    handler: async ({ ctx, auth, params }) => {
      const ai = await aisRepo(ctx.db).softDelete(auth.customerId, params.id);
      if (!ai) throw missing();
      const json = aiJson(ai);
      await publish(ctx, 'ai_deleted', json);
      return json;
    },
  }),
  ...['/ais/:id/direct_hash_regenerate', '/ais/:id/direct-hash-regenerate'].map((path) =>
    defineRoute({
      method: 'post',
      path,
      tag,
      summary: 'Regenerate the direct hash of an AI',
      permission: 'manager',
      params: idParams,
      response: aiSchema,
      handler: async ({ ctx, auth, params }) => {
        const ai = await aisRepo(ctx.db).regenerateDirectHash(auth.customerId, params.id);
        if (!ai) throw missing();
        const json = aiJson(ai);
        await publish(ctx, 'ai_updated', json);
        return json;
      },
    }),
  ),
  defineRoute({
    method: 'get',
    path: '/ais/:id/prompt_histories',
    tag,
    summary: 'List the prompt history of an AI',
    permission: 'agent',
    params: idParams,
    paginated: true,
    response: listOfShape(HISTORY_FIELDS),
    handler: async ({ ctx, auth, params, page }) => {
      if (!(await aisRepo(ctx.db).get(auth.customerId, params.id))) throw missing();
      const p = await aisRepo(ctx.db).histories(auth.customerId, params.id, page);
      return { result: p.result.map(promptHistoryJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/ais/:id/prompt_histories/:history_id',
    tag,
    summary: 'Get a prompt history entry',
    permission: 'agent',
    params: historyParams,
    response: shape(HISTORY_FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const h = await aisRepo(ctx.db).history(auth.customerId, params.id, params.history_id);
      if (!h) throw new ApiError('RESOURCE_NOT_FOUND', 'prompt history entry not found');
      return promptHistoryJson(h);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/ais/:id/participants',
    tag,
    summary: 'List the AI calls an AI took part in',
    permission: 'agent',
    params: idParams,
    paginated: true,
    description: 'Calls started with the AI and calls of a team in which it answered, each from its first turn.',
    response: participantList,
    handler: async ({ ctx, auth, params, page }) => {
      if (!(await aisRepo(ctx.db).get(auth.customerId, params.id))) throw missing();
      const p = await aicallsRepo(ctx.db).participants(auth.customerId, { aiId: params.id }, page);
      return { result: p.result.map(participantJson), next_page_token: p.next_page_token };
    },
  }),
];
