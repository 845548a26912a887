/**
 * Shared pieces of the webchat routes: response schemas, the widget body, and what a direct token
 * (booted from a widget's hash) is bound to: its widget (resource_id) and its one session
 * (allowed_resource_id, the id the session it creates takes).
 */
import { z } from 'zod';
import type { AppContext, AuthContext } from '../context';
import { ApiError, permissionDenied } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { flowsRepo } from '../../core/repos/flows';
import { webchatRepo, type SessionRow } from '../../core/webchat/repo';
import { conversationsRepo } from '../../core/repos/conversations';
import { hasLevel } from '../../core/permissions';
import { uuid } from '../route';
import { legacyTime, uuidOut } from '../routes/schemas';

const hex = z.string().regex(/^#[0-9a-fA-F]{3,8}$/, 'a hex colour such as #1a73e8');

export const themeConfig = z.strictObject({
  primary_color: hex.optional(),
  secondary_color: hex.optional(),
  header_background_color: hex.optional(),
  header_text_color: hex.optional(),
  logo_url: z
    .url({ protocol: /^https$/ })
    .max(2048)
    .or(z.literal(''))
    .optional(),
  position: z.enum(['bottom_right', 'bottom_left']).optional(),
  theme_mode: z.enum(['light', 'dark', 'auto']).optional(),
  header_title: z.string().max(100).optional(),
  header_subtitle: z.string().max(200).optional(),
  connecting_indicator_enabled: z.boolean().optional(),
  connecting_indicator_text: z.string().max(200).optional(),
  typing_indicator_enabled: z.boolean().optional(),
  border_radius: z.enum(['sharp', 'rounded', 'pill']).optional(),
  font_size: z.enum(['compact', 'default', 'large']).optional(),
});

export const widgetBody = z.object({
  name: z.string().max(255).optional(),
  session_flow_id: uuid().optional(),
  message_flow_id: uuid().optional(),
  session_idle_timeout: z.number().int().min(0).max(604800).optional().describe('seconds; 0 = sessions never idle out'),
  theme_config: themeConfig.optional(),
  status: z.enum(['active', 'inactive']).optional(),
});

export const widgetSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  name: z.string(),
  status: z.enum(['active', 'inactive']),
  session_flow_id: uuidOut(),
  message_flow_id: uuidOut(),
  session_idle_timeout: z.number().int(),
  theme_config: z.record(z.string(), z.unknown()),
  direct_hash: z.string(),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

const addressOut = z.object({ type: z.string(), target: z.string() });

export const sessionSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  widget_id: uuidOut(),
  status: z.enum(['active', 'ended']),
  page_url: z.string(),
  referrer: z.string(),
  peer: addressOut,
  local: addressOut,
  tm_last_activity: legacyTime(),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_end: legacyTime(),
});

export const webchatMessageSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  widget_id: uuidOut(),
  session_id: uuidOut(),
  direction: z.enum(['inbound', 'outbound']),
  status: z.enum(['sent', 'delivered', 'failed']),
  sender_id: z.string(),
  text: z.string(),
  tm_create: legacyTime(),
  tm_delete: legacyTime(),
});

export interface DirectBinding {
  widgetId: string;
  sessionId: string;
}

/** The binding of a direct token, null for other credentials; a direct token of another resource type is refused. */
export function directBinding(auth: AuthContext): DirectBinding | null {
  if (auth.kind !== 'direct') return null;
  if (auth.resourceType !== 'webchat_widget') throw permissionDenied('this direct token is not for a webchat widget');
  return { widgetId: auth.resourceId.toLowerCase(), sessionId: auth.allowedResourceId.toLowerCase() };
}

export const sessionNotFound = () => new ApiError('RESOURCE_NOT_FOUND', 'webchat session not found');
export const widgetNotFound = () => new ApiError('RESOURCE_NOT_FOUND', 'webchat widget not found');

/**
 * A session the caller may act on: a direct token only its own; managers any of the customer;
 * agents the sessions whose conversation they own.
 */
export async function reachableSession(ctx: AppContext, auth: AuthContext, id: string): Promise<SessionRow> {
  const sid = id.toLowerCase();
  const d = directBinding(auth);
  if (d && d.sessionId !== sid) throw sessionNotFound();
  const s = await webchatRepo(ctx.db).getSession(auth.customerId, sid);
  if (!s) throw sessionNotFound();
  if (!d && !hasLevel(auth.permission, 'manager')) {
    const c = await conversationsRepo(ctx.db).getOwned(auth.customerId, s.conversation_id);
    const agentId = auth.kind === 'agent' || auth.kind === 'delegate' ? auth.agentId.toLowerCase() : '';
    if (!c || c.owner_id !== agentId) throw sessionNotFound();
  }
  return s;
}

/** Flow ids of a widget must name flows of the customer (or be the empty UUID). */
export async function checkFlows(ctx: AppContext, customerId: string, body: { session_flow_id?: string; message_flow_id?: string }): Promise<void> {
  for (const field of ['session_flow_id', 'message_flow_id'] as const) {
    const id = body[field];
    if (!id || id === EMPTY_UUID) continue;
    if (!(await flowsRepo(ctx.db).getOwned(customerId, id.toLowerCase()))) {
      throw new ApiError('INVALID_ARGUMENT', `${field}: no such flow`, { details: [{ field, issue: 'not a flow of this customer' }] });
    }
  }
}
