/**
 * /webchat_messages: messages of webchat sessions. A visitor's direct token posts inbound messages
 * to its own session and reads that session's messages; agents (on sessions whose conversation
 * they own) and managers post outbound replies. Both are `webchat_message_created` events on the
 * session's topic and messages of its conversation.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid, type AnyRoute } from '../route';
import { ApiError } from '../../core/errors';
import { hasLevel } from '../../core/permissions';
import { webchatMessageJson, webchatRepo } from '../../core/webchat/repo';
import { postMessage } from '../../core/webchat/service';
import { messagingDeps } from '../messaging/deps';
import { listOf } from './schemas';
import { directBinding, reachableSession, webchatMessageSchema } from '../service-agents/webchat';
import type { AppContext, AuthContext } from '../context';

const tag = 'Webchat';
const messageNotFound = () => new ApiError('MESSAGE_NOT_FOUND', 'webchat message not found');

async function reachableMessage(ctx: AppContext, auth: AuthContext, id: string) {
  const m = await webchatRepo(ctx.db).getMessage(auth.customerId, id.toLowerCase());
  if (!m) throw messageNotFound();
  try {
    await reachableSession(ctx, auth, m.session_id);
  } catch {
    throw messageNotFound();
  }
  return m;
}

export const routes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/webchat_messages',
    tag,
    summary: 'List webchat messages',
    description: 'A direct token lists its own session’s messages (session_id defaults to it); agents below manager must name a session they answer.',
    permission: 'agent',
    direct: 'allow',
    paginated: true,
    query: z.object({ session_id: uuid().optional(), page_size: z.string().optional(), page_token: z.string().optional() }),
    response: listOf(webchatMessageSchema),
    handler: async ({ ctx, auth, page, query }) => {
      const d = directBinding(auth);
      const sessionId = (query.session_id ?? d?.sessionId)?.toLowerCase();
      if (sessionId) await reachableSession(ctx, auth, sessionId);
      else if (!hasLevel(auth.permission, 'manager'))
        throw new ApiError('MISSING_REQUEST_PARAMETER', 'query parameter session_id is required', { details: [{ field: 'session_id', issue: 'required' }] });
      const p = await webchatRepo(ctx.db).listMessages(auth.customerId, page, { session_id: sessionId });
      return { result: p.result.map(webchatMessageJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webchat_messages',
    tag,
    summary: 'Send a webchat message',
    description: 'A direct token sends inbound (visitor) messages to its own session; other callers send outbound replies. 409 STATE_INVALID once the session has ended.',
    permission: 'agent',
    direct: 'allow',
    body: z.object({ session_id: uuid().optional(), direction: z.enum(['inbound', 'outbound']).optional(), text: z.string().min(1).max(4096) }),
    response: webchatMessageSchema,
    handler: async ({ ctx, auth, body }) => {
      const d = directBinding(auth);
      const sessionId = (body.session_id ?? d?.sessionId)?.toLowerCase();
      if (!sessionId) throw new ApiError('INVALID_ARGUMENT', 'session_id: required', { details: [{ field: 'session_id', issue: 'required' }] });
      const want = d ? 'inbound' : 'outbound';
      if (body.direction && body.direction !== want) {
        throw new ApiError('INVALID_ARGUMENT', `direction: this caller sends ${want} messages`, { details: [{ field: 'direction', issue: `must be ${want}` }] });
      }
      const s = await reachableSession(ctx, auth, sessionId);
      const w = d ? await webchatRepo(ctx.db).getWidget(auth.customerId, s.widget_id) : null;
      const sender = auth.kind === 'agent' || auth.kind === 'delegate' ? auth.agentId.toLowerCase() : '';
      const m = await postMessage(messagingDeps(ctx), s, { direction: want, text: body.text, sender_id: sender }, w);
      if (!m) throw new ApiError('STATE_INVALID', 'the session has ended');
      return webchatMessageJson(m);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/webchat_messages/:id',
    tag,
    summary: 'Get a webchat message',
    permission: 'agent',
    direct: 'allow',
    params: idParams,
    response: webchatMessageSchema,
    handler: async ({ ctx, auth, params }) => webchatMessageJson(await reachableMessage(ctx, auth, params.id)),
  }),
  defineRoute({
    method: 'delete',
    path: '/webchat_messages/:id',
    tag,
    summary: 'Delete a webchat message',
    permission: 'manager',
    params: idParams,
    response: webchatMessageSchema,
    handler: async ({ ctx, auth, params }) => {
      const m = await reachableMessage(ctx, auth, params.id);
      const d = await webchatRepo(ctx.db).deleteMessage(m.id);
      if (!d) throw messageNotFound();
      return webchatMessageJson(d);
    },
  }),
];
