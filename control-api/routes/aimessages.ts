/**
 * /aimessages: the messages of AI calls. POST adds one to a progressing text session; a user
 * message is answered by the AI in the background (its answer arrives as aimessage_created).
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { ApiError, invalidArgument, notFound, stateInvalid } from '../../core/errors';
import { aicallsRepo, aimessageJson, type AicallRow, type AimessageRow } from '../../core/repos/ai-calls';
import type { AppContext } from '../context';
import { AiSession } from '../../core/ai/session';
import { LlmError } from '../../core/llm/client';
import { eventsOf, listOfShape, shape } from '../../core/ai/api';

export const AIMESSAGE_FIELDS = ['id', 'customer_id', 'aicall_id', 'activeflow_id', 'active_ai_id', 'role', 'content', 'direction', 'tool_calls', 'tool_call_id', 'metadata', 'tm_create'];
const tag = 'AI';
const missing = () => new ApiError('AIMESSAGE_NOT_FOUND', 'aimessage not found');

/** A message into a progressing text session (POST /aimessages, /service_agents/aimessages); a user's is answered in the background. */
export async function addAimessage(ctx: AppContext, c: AicallRow, body: { role: 'system' | 'user' | 'assistant' | 'notification'; content: string }): Promise<AimessageRow> {
  if (c.status !== 'progressing') throw stateInvalid(`the aicall is ${c.status}`);
  if (c.reference_type === 'call') throw invalidArgument('aicall_id: a voice session takes speech, not messages', [{ field: 'aicall_id', issue: 'voice session' }]);
  let s: AiSession;
  try {
    s = await AiSession.resume({ db: ctx.db, events: eventsOf(ctx), egress: ctx.egress }, c);
  } catch (e) {
    if (e instanceof LlmError) throw invalidArgument(`aicall_id: ${e.message}`, [{ field: 'aicall_id', issue: 'no LLM endpoint' }]);
    throw e;
  }
  const row = await s.addMessage(body.role === 'notification' ? 'system' : body.role, body.content);
  if (body.role === 'user') {
    void s.replyText('').catch((err: Error) => ctx.logger.warn({ err: err.message, aicall: c.id }, 'ai reply failed'));
  }
  return row;
}

export const aimessageBody = z.object({ aicall_id: uuid(), role: z.enum(['system', 'user', 'assistant', 'notification']), content: z.string().min(1).max(20_000) });

export const routes = [
  defineRoute({
    method: 'post',
    path: '/aimessages',
    tag,
    summary: 'Add a message to an AI call',
    permission: 'manager',
    body: aimessageBody,
    response: shape(AIMESSAGE_FIELDS),
    handler: async ({ ctx, auth, body }) => {
      const c = await aicallsRepo(ctx.db).get(auth.customerId, body.aicall_id);
      if (!c) throw notFound('RESOURCE_NOT_FOUND', 'aicall not found');
      return aimessageJson(await addAimessage(ctx, c, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/aimessages',
    tag,
    summary: 'List AI messages',
    permission: 'agent',
    paginated: true,
    query: z.object({ aicall_id: uuid().optional() }),
    response: listOfShape(AIMESSAGE_FIELDS),
    handler: async ({ ctx, auth, page, query }) => {
      const p = await aicallsRepo(ctx.db).messages(auth.customerId, page, query?.aicall_id);
      return { result: p.result.map(aimessageJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/aimessages/:id',
    tag,
    summary: 'Get an AI message',
    permission: 'agent',
    params: idParams,
    response: shape(AIMESSAGE_FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const m = await aicallsRepo(ctx.db).message(auth.customerId, params.id);
      if (!m) throw missing();
      return aimessageJson(m);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/aimessages/:id',
    tag,
    summary: 'Delete an AI message',
    permission: 'manager',
    params: idParams,
    response: shape(AIMESSAGE_FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const m = await aicallsRepo(ctx.db).deleteMessage(auth.customerId, params.id);
      if (!m) throw missing();
      return aimessageJson(m);
    },
  }),
];
