/**
 * /webchat_sessions: a visitor's chat through a widget. A direct token booted from the widget's
 * hash creates exactly one session, which takes the token's allowed_resource_id (a second create
 * answers 409 ALREADY_EXISTS), and may then read and end only that session. Managers see and
 * delete every session; the session is threaded into a conversation that agents answer.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid, type AnyRoute } from '../route';
import { ApiError, alreadyExists } from '../../core/errors';
import { newId } from '../../core/ids';
import { sessionJson, webchatRepo } from '../../core/webchat/repo';
import { endSession, openSession } from '../../core/webchat/service';
import { messagingDeps } from '../messaging/deps';
import { listOf } from './schemas';
import { directBinding, reachableSession, sessionNotFound, sessionSchema, widgetNotFound } from '../service-agents/webchat';

const tag = 'Webchat';

export const routes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/webchat_sessions',
    tag,
    summary: 'List webchat sessions',
    permission: 'manager',
    paginated: true,
    query: z.object({ widget_id: uuid().optional(), page_size: z.string().optional(), page_token: z.string().optional() }),
    response: listOf(sessionSchema),
    handler: async ({ ctx, auth, page, query }) => {
      const p = await webchatRepo(ctx.db).listSessions(auth.customerId, page, { widget_id: query.widget_id?.toLowerCase() });
      return { result: p.result.map(sessionJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webchat_sessions',
    tag,
    summary: 'Create a webchat session (a visitor’s direct token: once, for its widget)',
    description: 'With a direct token widget_id defaults to the token’s widget and must equal it when given; the session takes the token’s allowed_resource_id.',
    permission: 'manager',
    direct: 'allow',
    body: z.object({ widget_id: uuid().optional(), page_url: z.string().max(2048).optional(), referrer: z.string().max(2048).optional() }),
    response: sessionSchema,
    handler: async ({ ctx, auth, body }) => {
      const d = directBinding(auth);
      const widgetId = (body.widget_id ?? d?.widgetId)?.toLowerCase();
      if (!widgetId) throw new ApiError('INVALID_ARGUMENT', 'widget_id: required', { details: [{ field: 'widget_id', issue: 'required' }] });
      if (d && widgetId !== d.widgetId) throw widgetNotFound();
      const repo = webchatRepo(ctx.db);
      const w = await repo.getWidget(auth.customerId, widgetId);
      if (!w) throw widgetNotFound();
      if (w.status !== 'active') throw new ApiError('STATE_INVALID', 'the widget is inactive');
      const id = d ? d.sessionId : newId();
      if (await repo.sessionExists(id)) throw alreadyExists('this token has already created its session');
      try {
        return sessionJson(await openSession(messagingDeps(ctx), w, id, body));
      } catch (e) {
        if ((e as { code?: string }).code === '23505') throw alreadyExists('this token has already created its session');
        throw e;
      }
    },
  }),
  defineRoute({
    method: 'get',
    path: '/webchat_sessions/:id',
    tag,
    summary: 'Get a webchat session',
    permission: 'agent',
    direct: 'allow',
    params: idParams,
    response: sessionSchema,
    handler: async ({ ctx, auth, params }) => sessionJson(await reachableSession(ctx, auth, params.id)),
  }),
  defineRoute({
    method: 'post',
    path: '/webchat_sessions/:id/end',
    tag,
    summary: 'End a webchat session (409 STATE_INVALID when it has ended)',
    permission: 'agent',
    direct: 'allow',
    params: idParams,
    response: sessionSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = await reachableSession(ctx, auth, params.id);
      const ended = await endSession(messagingDeps(ctx), s);
      if (!ended) throw new ApiError('STATE_INVALID', 'the session has already ended');
      return sessionJson(ended);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/webchat_sessions/:id',
    tag,
    summary: 'Delete a webchat session (ends it first)',
    permission: 'manager',
    params: idParams,
    response: sessionSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = await reachableSession(ctx, auth, params.id);
      if (s.status === 'active') await endSession(messagingDeps(ctx), s);
      const d = await webchatRepo(ctx.db).deleteSession(s.id);
      if (!d) throw sessionNotFound();
      return sessionJson(d);
    },
  }),
];
