/** Row types of core/webchat/repo.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export const WIDGET_STATUSES = ['active', 'inactive'] as const;

export type WidgetStatus = (typeof WIDGET_STATUSES)[number];

export type SessionStatus = 'active' | 'ended';

export type MessageDirection = 'inbound' | 'outbound';

export type ThemeConfig = Record<string, unknown>;

export interface WidgetRow {
  id: string;
  customer_id: string;
  name: string;
  status: WidgetStatus;
  session_flow_id: string;
  message_flow_id: string;
  session_idle_timeout: number;
  theme_config: ThemeConfig;
  direct_hash: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}

export interface SessionRow {
  id: string;
  customer_id: string;
  widget_id: string;
  conversation_id: string;
  activeflow_id: string;
  status: SessionStatus;
  page_url: string;
  referrer: string;
  tm_last_activity: Date | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_end: Date | null;
  tm_delete: Date | null;
}

export interface WebchatMessageRow {
  id: string;
  customer_id: string;
  widget_id: string;
  session_id: string;
  direction: MessageDirection;
  status: 'sent' | 'delivered' | 'failed';
  sender_id: string;
  text: string;
  tm_create: Date;
  tm_delete: Date | null;
}
