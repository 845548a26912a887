/**
 * /aicalls: AI sessions. Voice sessions start from a flow (ai_talk); through the API a text session
 * starts for a conversation or a task, and its turns go through POST /aimessages.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { invalidArgument, notFound, stateInvalid } from '../../core/errors';
import { aicallJson, aicallsRepo, participantJson, AICALL_EVENT, type AicallRow } from '../../core/repos/ai-calls';
import type { AppContext } from '../context';
import { participantList } from './ais';
import { AiNotFound, AiSession } from '../../core/ai/session';
import { LlmError } from '../../core/llm/client';
import { eventsOf, listOfShape, publish, shape } from '../../core/ai/api';
import type { EventType } from '../../core/events/catalogue';

export const AICALL_FIELDS = [
  'id',
  'customer_id',
  'assistance_type',
  'assistance_id',
  'ai_engine_model',
  'ai_tts_type',
  'ai_tts_voice_id',
  'ai_stt_type',
  'ai_vad_config',
  'ai_smart_turn_enabled',
  'parameter',
  'activeflow_id',
  'reference_type',
  'reference_id',
  'confbridge_id',
  'current_member_id',
  'status',
  'stt_language',
  'metadata',
  'tm_end',
  'tm_create',
  'tm_update',
  'tm_delete',
];
const tag = 'AI';
const missing = () => notFound('RESOURCE_NOT_FOUND', 'aicall not found');

export interface AicallStart {
  assistance_type: 'ai' | 'team';
  assistance_id: string;
  reference_type: '' | 'call' | 'conversation' | 'task' | 'contact_case';
  reference_id?: string;
}

/** A text AI session (POST /aicalls, /service_agents/aicalls); a call's voice session starts with ai_talk. */
export async function startAicall(ctx: AppContext, customerId: string, body: AicallStart): Promise<AicallRow> {
  if (body.reference_type === 'call') throw invalidArgument('reference_type: a voice session on a call starts with the ai_talk flow action', [{ field: 'reference_type', issue: 'use ai_talk' }]);
  try {
    const s = await AiSession.start(
      { db: ctx.db, events: eventsOf(ctx), egress: ctx.egress },
      {
        customerId,
        assistanceType: body.assistance_type,
        assistanceId: body.assistance_id,
        referenceType: body.reference_type === 'contact_case' ? 'task' : body.reference_type,
        referenceId: body.reference_id ?? '',
        activeflowId: '',
      },
    );
    return s.aicall;
  } catch (e) {
    if (e instanceof AiNotFound) throw notFound('AI_NOT_FOUND', e.message);
    if (e instanceof LlmError) throw invalidArgument(`assistance_id: ${e.message}`, [{ field: 'assistance_id', issue: 'no LLM endpoint' }]);
    throw e;
  }
}

export const routes = [
  defineRoute({
    method: 'post',
    path: '/aicalls',
    tag,
    summary: 'Start a text AI session (conversation or task)',
    permission: 'manager',
    body: z.object({
      assistance_type: z.enum(['ai', 'team']),
      assistance_id: uuid(),
      reference_type: z.enum(['', 'call', 'conversation', 'task', 'contact_case']),
      reference_id: z.union([z.literal(''), uuid()]).optional(),
    }),
    response: shape(AICALL_FIELDS),
    handler: async ({ ctx, auth, body }) => aicallJson(await startAicall(ctx, auth.customerId, body)),
  }),
  defineRoute({
    method: 'get',
    path: '/aicalls',
    tag,
    summary: 'List AI calls',
    permission: 'agent',
    paginated: true,
    response: listOfShape(AICALL_FIELDS),
    handler: async ({ ctx, auth, page }) => {
      const p = await aicallsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(aicallJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/aicalls/:id',
    tag,
    summary: 'Get an AI call',
    permission: 'agent',
    params: idParams,
    response: shape(AICALL_FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const c = await aicallsRepo(ctx.db).get(auth.customerId, params.id);
      if (!c) throw missing();
      return aicallJson(c);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/aicalls/:id/terminate',
    tag,
    summary: 'Terminate an AI call',
    permission: 'manager',
    params: idParams,
    response: shape(AICALL_FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const repo = aicallsRepo(ctx.db);
      const c = await repo.get(auth.customerId, params.id);
      if (!c) throw missing();
      if (c.status === 'terminated') throw stateInvalid('the aicall is already terminated');
      let cur = c;
      for (const to of ['terminating', 'terminated'] as const) {
        const r = await repo.transition(c.id, to);
        if (r) {
          cur = r;
          await publish(ctx, AICALL_EVENT[to] as EventType, aicallJson(r));
        }
      }
      return aicallJson(cur);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/aicalls/:id',
    tag,
    summary: 'Delete an AI call',
    permission: 'manager',
    params: idParams,
    response: shape(AICALL_FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const c = await aicallsRepo(ctx.db).softDelete(auth.customerId, params.id);
      if (!c) throw missing();
      return aicallJson(c);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/aicalls/:id/participants',
    tag,
    summary: 'List the AIs that took part in an AI call',
    permission: 'agent',
    params: idParams,
    paginated: true,
    description: 'The AI the call was started with and every team member that answered in it, each from its first turn.',
    response: participantList,
    handler: async ({ ctx, auth, params, page }) => {
      const repo = aicallsRepo(ctx.db);
      if (!(await repo.get(auth.customerId, params.id))) throw missing();
      const p = await repo.participants(auth.customerId, { aicallId: params.id }, page);
      return { result: p.result.map(participantJson), next_page_token: p.next_page_token };
    },
  }),
];
