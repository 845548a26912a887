/**
 * /transcribes: live transcription of a call or a conference (its whole mix), or transcription of a recording (docs/speech.md).
 * A live one is written here (progressing) and started by the node that owns the call; a
 * recording's goes to any node (shared queue). Segments land in /transcripts.
 */
import { z } from 'zod';
import { defineRoute, idParams, orMissing, uuid } from '../route';
import { notFound } from '../../core/errors';
import { transcribeJson, transcribesRepo } from '../../core/repos/transcribes';
import { startTranscribe, stopTranscribe, transcribeBody } from '../transcribes/start';
import { legacyTime, listOf, uuidOut } from './schemas';

const tag = 'Transcribe';
export const transcribeSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  activeflow_id: uuidOut(),
  on_end_flow_id: uuidOut(),
  reference_type: z.enum(['call', 'confbridge', 'recording']),
  reference_id: uuidOut(),
  status: z.enum(['progressing', 'done']),
  language: z.string(),
  direction: z.enum(['in', 'out', 'both']),
  provider: z.string(),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});
const missing = () => notFound('RESOURCE_NOT_FOUND', 'transcribe not found');

export const routes = [
  defineRoute({
    method: 'post',
    path: '/transcribes',
    tag,
    summary: 'Transcribe a live call, or a recording',
    permission: 'manager',
    body: transcribeBody,
    response: transcribeSchema,
    handler: async ({ ctx, auth, body }) => transcribeJson(await startTranscribe(ctx, auth.customerId, body)),
  }),
  defineRoute({
    method: 'get',
    path: '/transcribes',
    tag,
    summary: 'List transcribes (resource_id or reference_id: of one call, conference or recording)',
    permission: 'manager',
    paginated: true,
    query: z.object({
      resource_id: uuid().optional(),
      reference_id: uuid().optional(),
      reference_type: z.enum(['call', 'confbridge', 'recording', 'unknown']).optional(),
      page_size: z.string().optional(),
      page_token: z.string().optional(),
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
    method: 'get',
    path: '/transcribes/:id',
    tag,
    summary: 'Get a transcribe',
    permission: 'manager',
    params: idParams,
    response: transcribeSchema,
    handler: async ({ ctx, auth, params }) => {
      const t = await orMissing(transcribesRepo(ctx.db).get(auth.customerId, params.id), missing);
      return transcribeJson(t);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/transcribes/:id/stop',
    tag,
    summary: 'Stop a live transcribe (its last segments are still stored)',
    permission: 'manager',
    params: idParams,
    response: transcribeSchema,
    handler: async ({ ctx, auth, params }) => {
      const t = await orMissing(transcribesRepo(ctx.db).get(auth.customerId, params.id), missing);
      return transcribeJson(await stopTranscribe(ctx, t));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/transcribes/:id',
    tag,
    summary: 'Delete a transcribe and its transcripts (a live one is stopped first)',
    permission: 'manager',
    params: idParams,
    response: transcribeSchema,
    handler: async ({ ctx, auth, params }) => {
      const repo = transcribesRepo(ctx.db);
      const t = await orMissing(repo.get(auth.customerId, params.id), missing);
      if (t.status === 'progressing' && t.reference_type !== 'recording') await stopTranscribe(ctx, t);
      // a recording's transcription still running finishes in the background, out of sight
      return transcribeJson(await orMissing(repo.softDelete(auth.customerId, t.id), missing));
    },
  }),
];
