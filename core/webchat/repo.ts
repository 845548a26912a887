/**
 * Webchat widgets (a customer's embeddable chat, booted by visitors with its direct hash), the
 * visitor sessions opened through them and the messages of a session. Legacy timestamps
 * (`9999-01-01 00:00:00.000000` when unset), as on other messaging resources.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { MessageDirection, SessionRow, ThemeConfig, WebchatMessageRow, WidgetRow } from '../db/rows/webchat';
export { type MessageDirection, type SessionRow, type SessionStatus, type ThemeConfig, WIDGET_STATUSES, type WebchatMessageRow, type WidgetRow, type WidgetStatus } from '../db/rows/webchat';

/** `direct.` + 32 hex: what the embed script's data-hash carries to POST /auth/boot. */
export function newDirectHash(): string {
  return 'direct.' + randomBytes(16).toString('hex');
}

export function widgetJson(w: WidgetRow) {
  return {
    id: w.id,
    customer_id: w.customer_id,
    name: w.name,
    status: w.status,
    session_flow_id: w.session_flow_id,
    message_flow_id: w.message_flow_id,
    session_idle_timeout: w.session_idle_timeout,
    theme_config: w.theme_config ?? {},
    direct_hash: w.direct_hash,
    tm_create: formatLegacy(w.tm_create),
    tm_update: formatLegacy(w.tm_update),
    tm_delete: formatLegacy(w.tm_delete),
  };
}

/** What an anonymous visitor may see of a widget (boot response resource_data.public_display_config). */
export function publicDisplayConfig(w: WidgetRow): Record<string, unknown> {
  return { name: w.name, theme_config: w.theme_config ?? {} };
}

export function sessionJson(s: SessionRow) {
  return {
    id: s.id,
    customer_id: s.customer_id,
    widget_id: s.widget_id,
    status: s.status,
    page_url: s.page_url,
    referrer: s.referrer,
    peer: { type: 'web_session', target: s.id },
    local: { type: 'webchat', target: s.widget_id },
    tm_last_activity: formatLegacy(s.tm_last_activity),
    tm_create: formatLegacy(s.tm_create),
    tm_update: formatLegacy(s.tm_update),
    tm_end: formatLegacy(s.tm_end),
  };
}

export function webchatMessageJson(m: WebchatMessageRow) {
  return {
    id: m.id,
    customer_id: m.customer_id,
    widget_id: m.widget_id,
    session_id: m.session_id,
    direction: m.direction,
    status: m.status,
    sender_id: m.sender_id,
    text: m.text,
    tm_create: formatLegacy(m.tm_create),
    tm_delete: formatLegacy(m.tm_delete),
  };
}

export interface WidgetFields {
  name?: string;
  session_flow_id?: string;
  message_flow_id?: string;
  session_idle_timeout?: number;
  theme_config?: ThemeConfig;
}

export function webchatRepo(db: Db) {
  const widgets = () => db('webchat_widgets');
  const sessions = () => db('webchat_sessions');
  const messages = () => db('webchat_messages');
  return {
    async createWidget(customerId: string, f: WidgetFields): Promise<WidgetRow> {
      const now = clock.now();
      const [row] = await widgets()
        .insert({
          id: newId(),
          customer_id: customerId,
          name: f.name ?? '',
          status: 'active',
          session_flow_id: f.session_flow_id ?? EMPTY_UUID,
          message_flow_id: f.message_flow_id ?? EMPTY_UUID,
          session_idle_timeout: f.session_idle_timeout ?? 0,
          theme_config: JSON.stringify(f.theme_config ?? {}),
          direct_hash: newDirectHash(),
          tm_create: now,
          tm_update: now,
        })
        .returning('*');
      return row as WidgetRow;
    },
    async getWidget(customerId: string, id: string): Promise<WidgetRow | null> {
      return ((await widgets().where({ id, customer_id: customerId }).whereNull('tm_delete').first()) as WidgetRow | undefined) ?? null;
    },
    async widgetByHash(hash: string): Promise<WidgetRow | null> {
      return ((await widgets().where({ direct_hash: hash }).whereNull('tm_delete').first()) as WidgetRow | undefined) ?? null;
    },
    async listWidgets(customerId: string, params: PageParams): Promise<Page<WidgetRow>> {
      return toPage(await paginate<WidgetRow>(widgets().where({ customer_id: customerId }).whereNull('tm_delete').select('*'), params), (r) => r);
    },
    async updateWidget(id: string, f: WidgetFields & { direct_hash?: string }): Promise<WidgetRow | null> {
      const values: Record<string, unknown> = { ...f, tm_update: clock.now() };
      if (f.theme_config) values.theme_config = JSON.stringify(f.theme_config);
      const [row] = await widgets().where({ id }).whereNull('tm_delete').update(values).returning('*');
      return (row as WidgetRow | undefined) ?? null;
    },
    async deleteWidget(id: string): Promise<WidgetRow | null> {
      const now = clock.now();
      const [row] = await widgets().where({ id }).whereNull('tm_delete').update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as WidgetRow | undefined) ?? null;
    },

    async insertSession(row: Pick<SessionRow, 'id' | 'customer_id' | 'widget_id' | 'conversation_id' | 'page_url' | 'referrer'>): Promise<SessionRow> {
      const now = clock.now();
      const [r] = await sessions()
        .insert({ ...row, activeflow_id: EMPTY_UUID, status: 'active', tm_last_activity: now, tm_create: now, tm_update: now })
        .returning('*');
      return r as SessionRow;
    },
    /** Any session with this id, deleted or not (a direct token's one session is created once). */
    async sessionExists(id: string): Promise<boolean> {
      return (await sessions().where({ id }).first()) !== undefined;
    },
    async getSession(customerId: string, id: string): Promise<SessionRow | null> {
      return ((await sessions().where({ id, customer_id: customerId }).whereNull('tm_delete').first()) as SessionRow | undefined) ?? null;
    },
    async sessionByConversation(conversationId: string): Promise<SessionRow | null> {
      return ((await sessions().where({ conversation_id: conversationId }).whereNull('tm_delete').first()) as SessionRow | undefined) ?? null;
    },
    async listSessions(customerId: string, params: PageParams, f: { widget_id?: string } = {}): Promise<Page<SessionRow>> {
      const q = sessions().where({ customer_id: customerId }).whereNull('tm_delete').select('*');
      if (f.widget_id) q.where({ widget_id: f.widget_id });
      return toPage(await paginate<SessionRow>(q, params), (r) => r);
    },
    async setSessionFlow(id: string, activeflowId: string): Promise<void> {
      await sessions().where({ id }).update({ activeflow_id: activeflowId });
    },
    async touchSession(id: string): Promise<void> {
      const now = clock.now();
      await sessions().where({ id }).update({ tm_last_activity: now, tm_update: now });
    },
    /** Ends an active session; null when it is not active. */
    async endSession(id: string): Promise<SessionRow | null> {
      const now = clock.now();
      const [row] = await sessions().where({ id, status: 'active' }).whereNull('tm_delete').update({ status: 'ended', tm_end: now, tm_update: now }).returning('*');
      return (row as SessionRow | undefined) ?? null;
    },
    async deleteSession(id: string): Promise<SessionRow | null> {
      const now = clock.now();
      const [row] = await sessions()
        .where({ id })
        .whereNull('tm_delete')
        .update({ tm_delete: now, tm_update: now, status: 'ended', tm_end: db.raw('coalesce(tm_end, ?)', [now]) })
        .returning('*');
      return (row as SessionRow | undefined) ?? null;
    },

    async addMessage(s: SessionRow, m: { direction: MessageDirection; text: string; sender_id?: string }): Promise<WebchatMessageRow> {
      const [row] = await messages()
        .insert({
          id: newId(),
          customer_id: s.customer_id,
          widget_id: s.widget_id,
          session_id: s.id,
          direction: m.direction,
          status: 'sent',
          sender_id: m.sender_id ?? '',
          text: m.text,
          tm_create: clock.now(),
        })
        .returning('*');
      return row as WebchatMessageRow;
    },
    async getMessage(customerId: string, id: string): Promise<WebchatMessageRow | null> {
      return ((await messages().where({ id, customer_id: customerId }).whereNull('tm_delete').first()) as WebchatMessageRow | undefined) ?? null;
    },
    async listMessages(customerId: string, params: PageParams, f: { session_id?: string } = {}): Promise<Page<WebchatMessageRow>> {
      const q = messages().where({ customer_id: customerId }).whereNull('tm_delete').select('*');
      if (f.session_id) q.where({ session_id: f.session_id });
      return toPage(await paginate<WebchatMessageRow>(q, params), (r) => r);
    },
    async deleteMessage(id: string): Promise<WebchatMessageRow | null> {
      const [row] = await messages().where({ id }).whereNull('tm_delete').update({ tm_delete: clock.now() }).returning('*');
      return (row as WebchatMessageRow | undefined) ?? null;
    },
  };
}
export type WebchatRepo = ReturnType<typeof webchatRepo>;

/** The conversation a webchat session belongs to, whoever's it is (null for no such session). */
export async function webchatSessionConversation(db: Db, sessionId: string): Promise<string | null> {
  const s = (await db('webchat_sessions').where({ id: sessionId }).first('conversation_id')) as { conversation_id: string } | undefined;
  return s ? s.conversation_id : null;
}
