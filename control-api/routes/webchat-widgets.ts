/**
 * /webchat_widgets: a customer's embeddable chat. Creating one issues its direct hash (the embed
 * script's data-hash, booted through POST /auth/boot); regeneration replaces it, so tokens booted
 * from the old hash keep working until they expire but the old hash boots no more.
 */
import { defineRoute, idParams, type AnyRoute } from '../route';
import { newDirectHash, webchatRepo, widgetJson, type WidgetRow } from '../../core/webchat/repo';
import { listOf } from './schemas';
import { checkFlows, widgetBody, widgetNotFound, widgetSchema } from '../service-agents/webchat';
import type { AppContext } from '../context';

const tag = 'Webchat';

async function widget(ctx: AppContext, customerId: string, id: string): Promise<WidgetRow> {
  const w = await webchatRepo(ctx.db).getWidget(customerId, id.toLowerCase());
  if (!w) throw widgetNotFound();
  return w;
}

function lower<T extends { session_flow_id?: string; message_flow_id?: string }>(b: T): T {
  return { ...b, ...(b.session_flow_id ? { session_flow_id: b.session_flow_id.toLowerCase() } : {}), ...(b.message_flow_id ? { message_flow_id: b.message_flow_id.toLowerCase() } : {}) };
}

export const routes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/webchat_widgets',
    tag,
    summary: 'List webchat widgets',
    permission: 'manager',
    paginated: true,
    response: listOf(widgetSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await webchatRepo(ctx.db).listWidgets(auth.customerId, page);
      return { result: p.result.map(widgetJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webchat_widgets',
    tag,
    summary: 'Create a webchat widget (issues its direct hash)',
    permission: 'manager',
    body: widgetBody.omit({ status: true }),
    response: widgetSchema,
    handler: async ({ ctx, auth, body }) => {
      await checkFlows(ctx, auth.customerId, body);
      return widgetJson(await webchatRepo(ctx.db).createWidget(auth.customerId, lower(body)));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/webchat_widgets/:id',
    tag,
    summary: 'Get a webchat widget',
    permission: 'manager',
    params: idParams,
    response: widgetSchema,
    handler: async ({ ctx, auth, params }) => widgetJson(await widget(ctx, auth.customerId, params.id)),
  }),
  defineRoute({
    method: 'put',
    path: '/webchat_widgets/:id',
    tag,
    summary: 'Update a webchat widget (only the given fields change; theme_config is replaced whole)',
    permission: 'manager',
    params: idParams,
    body: widgetBody,
    response: widgetSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const w = await widget(ctx, auth.customerId, params.id);
      await checkFlows(ctx, auth.customerId, body);
      const u = await webchatRepo(ctx.db).updateWidget(w.id, lower(body));
      if (!u) throw widgetNotFound();
      return widgetJson(u);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/webchat_widgets/:id',
    tag,
    summary: 'Delete a webchat widget (its hash boots no more)',
    permission: 'manager',
    params: idParams,
    response: widgetSchema,
    handler: async ({ ctx, auth, params }) => {
      const w = await widget(ctx, auth.customerId, params.id);
      const d = await webchatRepo(ctx.db).deleteWidget(w.id);
      if (!d) throw widgetNotFound();
      return widgetJson(d);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webchat_widgets/:id/direct_hash_regenerate',
    tag,
    summary: 'Replace the direct hash of a webchat widget',
    permission: 'manager',
    params: idParams,
    response: widgetSchema,
    handler: async ({ ctx, auth, params }) => {
      const w = await widget(ctx, auth.customerId, params.id);
      for (let attempt = 0; ; attempt++) {
        try {
          const u = await webchatRepo(ctx.db).updateWidget(w.id, { direct_hash: newDirectHash() });
          if (!u) throw widgetNotFound();
          return widgetJson(u);
        } catch (e) {
          // 128 random bits collide only in theory; retry a few times rather than answer 500.
          if ((e as { constraint?: string }).constraint === 'webchat_widgets_direct_hash_uq' && attempt < 3) continue;
          throw e;
        }
      }
    },
  }),
];
