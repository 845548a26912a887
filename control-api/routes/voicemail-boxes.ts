/**
 * /voicemail_boxes (an extension of the reference API, issue 37): CRUD of voicemail boxes, per
 * extension (`extension_id`) or free-standing, and /voicemail_boxes/{id}/messages (newest first,
 * `folder` new|old). The PIN is write-only (hashed at rest). Logic and repos: core/voicemail/.
 */
import { z } from 'zod';
import { defineRoute, idParams, refId, text } from '../route';
import { ApiError, alreadyExists, notFound } from '../../core/errors';
import { eventPublisher } from '../../core/events/bus';
import { publishResourceEvent } from '../../core/events/catalogue';
import { BOX_NUMBER_PATTERN, PIN_PATTERN, voicemailBoxesRepo, voicemailBoxJson, type BoxWriteError } from '../../core/voicemail/boxes';
import { FOLDERS, voicemailMessagesRepo, voicemailMessageJson } from '../../core/voicemail/messages';
import { mailboxSummary } from '../../core/voicemail/mwi';
import { unlockPinBox } from '../../core/voicemail/pin-lockout';
import type { AppContext } from '../context';
import { listOf } from './schemas';
import { voicemailMessageSchema } from './voicemail-messages';

export const boxSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  extension_id: z.string(),
  number: z.string(),
  name: z.string(),
  detail: z.string(),
  greeting_unavailable: z.boolean(),
  greeting_busy: z.boolean(),
  greeting_name: z.boolean(),
  greeting_text: z.string(),
  language: z.string(),
  max_message_sec: z.number(),
  max_messages: z.number(),
  email: z.string(),
  attach_audio: z.boolean(),
  delete_after_email: z.boolean(),
  ai_summary: z.boolean().describe("the platform's LLM summarises each message's transcript"),
  tm_create: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});
const boxWithSummary = boxSchema.extend({ new_count: z.number(), old_count: z.number() });

/** New and old counts of the listed boxes in one query (a box without messages has none). */
async function countsOf(ctx: AppContext, boxIds: string[]): Promise<Map<string, { new_count: number; old_count: number }>> {
  const out = new Map(boxIds.map((id) => [id, { new_count: 0, old_count: 0 }]));
  if (!boxIds.length) return out;
  for (const r of await voicemailMessagesRepo(ctx.db).countsByBox(boxIds)) {
    const c = out.get(r.box_id);
    if (c && r.folder === 'new') c.new_count = r.n;
    else if (c && r.folder === 'old') c.old_count = r.n;
  }
  return out;
}

const pin = () => z.string().regex(PIN_PATTERN, 'pin must be 4 to 10 digits');
const settings = {
  extension_id: refId().describe("the extension the box belongs to ('' for a free-standing box)"),
  name: text().optional(),
  detail: text(1024).optional(),
  greeting_text: text(1024).optional().describe('spoken (TTS) when the box has no recorded greeting'),
  language: z
    .string()
    .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'language must be a BCP 47 tag')
    .optional(),
  max_message_sec: z.number().int().min(5).max(3600).optional(),
  max_messages: z.number().int().min(1).max(10000).optional(),
  email: z.union([z.literal(''), z.email().max(255)]).optional(),
  attach_audio: z.boolean().optional(),
  delete_after_email: z.boolean().optional(),
  ai_summary: z.boolean().optional().describe("opt-in (default false): each message's transcript is summarised by the platform's LLM (AI_LLM_BASE_URL)"),
};
const missing = () => notFound('RESOURCE_NOT_FOUND', 'voicemail box not found');
const tag = 'VoicemailBox';

function writeError(e: BoxWriteError): ApiError {
  if (e === 'duplicate_number') return alreadyExists('a voicemail box with this number exists');
  if (e === 'duplicate_extension') return alreadyExists('this extension already has a voicemail box');
  return new ApiError('INVALID_ARGUMENT', 'extension_id names no extension of this customer', { details: [{ field: 'extension_id', issue: 'not found' }] });
}

async function publish(
  ctx: AppContext,
  type: 'voicemail_box_created' | 'voicemail_box_updated' | 'voicemail_box_deleted' | 'voicemail_box_unlocked',
  json: ReturnType<typeof voicemailBoxJson>,
): Promise<void> {
  await publishResourceEvent(eventPublisher(ctx), type, json).catch((err: Error) => ctx.logger.warn({ err: err.message, type }, 'event publish failed'));
}

export const routes = [
  defineRoute({
    method: 'post',
    path: '/voicemail_boxes',
    tag,
    summary: 'Create a voicemail box',
    permission: 'manager',
    body: z.object({ number: z.string().regex(BOX_NUMBER_PATTERN, 'number must be 1 to 20 digits'), pin: pin(), ...settings }),
    response: boxSchema,
    handler: async ({ ctx, auth, body }) => {
      const r = await voicemailBoxesRepo(ctx.db).create(auth.customerId, body);
      if (typeof r === 'string') throw writeError(r);
      const json = voicemailBoxJson(r);
      await publish(ctx, 'voicemail_box_created', json);
      return json;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/voicemail_boxes',
    tag,
    summary: 'List voicemail boxes with their new and old message counts',
    permission: 'agent',
    paginated: true,
    response: listOf(boxWithSummary),
    handler: async ({ ctx, auth, page }) => {
      const p = await voicemailBoxesRepo(ctx.db).list(auth.customerId, page);
      const counts = await countsOf(
        ctx,
        p.result.map((b) => b.id),
      );
      return { result: p.result.map((b) => ({ ...voicemailBoxJson(b), ...(counts.get(b.id) ?? { new_count: 0, old_count: 0 }) })), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/voicemail_boxes/:id',
    tag,
    summary: 'Get a voicemail box with its new and old message counts',
    permission: 'agent',
    params: idParams,
    response: boxWithSummary,
    handler: async ({ ctx, auth, params }) => {
      const b = await voicemailBoxesRepo(ctx.db).get(auth.customerId, params.id);
      if (!b) throw missing();
      const s = await mailboxSummary(ctx.db, b.id);
      return { ...voicemailBoxJson(b), new_count: s.newCount, old_count: s.oldCount };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/voicemail_boxes/:id',
    tag,
    summary: 'Update a voicemail box (pin, settings)',
    permission: 'manager',
    params: idParams,
    body: z.object({ number: z.string().regex(BOX_NUMBER_PATTERN, 'number must be 1 to 20 digits').optional(), pin: pin().optional(), ...settings }),
    response: boxSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const r = await voicemailBoxesRepo(ctx.db).update(auth.customerId, params.id, body);
      if (typeof r === 'string') throw writeError(r);
      if (!r) throw missing();
      const json = voicemailBoxJson(r);
      await publish(ctx, 'voicemail_box_updated', json);
      return json;
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/voicemail_boxes/:id',
    tag,
    summary: 'Delete a voicemail box and its messages (soft)',
    permission: 'manager',
    params: idParams,
    response: boxSchema,
    handler: async ({ ctx, auth, params }) => {
      const r = await voicemailBoxesRepo(ctx.db).softDelete(auth.customerId, params.id);
      if (!r) throw missing();
      const json = voicemailBoxJson(r);
      await publish(ctx, 'voicemail_box_deleted', json);
      return json;
    },
  }),
  defineRoute({
    method: 'post',
    path: '/voicemail_boxes/:id/unlock',
    tag,
    summary: 'Unlock a voicemail box locked by wrong PINs (and the callers locked by their wrong PINs on it)',
    description:
      'Our extension. Wrong PINs at the voice menu are counted across calls per box and per caller (VOICEMAIL_PIN_LOCKOUT_*): ' +
      'a locked box takes no PIN until its lock ends or this unlock. Publishes voicemail_box_unlocked. `was_locked`: whether the box itself was locked.',
    permission: 'manager',
    params: idParams,
    response: boxSchema.extend({ was_locked: z.boolean() }),
    handler: async ({ ctx, auth, params }) => {
      const b = await voicemailBoxesRepo(ctx.db).get(auth.customerId, params.id);
      if (!b) throw missing();
      const wasLocked = await unlockPinBox(ctx.redis, ctx.config.redisKeyPrefix, auth.customerId, b.id);
      const json = voicemailBoxJson(b);
      await publish(ctx, 'voicemail_box_unlocked', json);
      return { ...json, was_locked: wasLocked };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/voicemail_boxes/:id/messages',
    tag,
    summary: 'List the messages of a voicemail box, newest first',
    permission: 'agent',
    paginated: true,
    params: idParams,
    query: z.object({ folder: z.enum(FOLDERS).optional(), page_size: z.string().optional(), page_token: z.string().optional() }),
    response: listOf(voicemailMessageSchema),
    handler: async ({ ctx, auth, params, query, page }) => {
      const b = await voicemailBoxesRepo(ctx.db).get(auth.customerId, params.id);
      if (!b) throw missing();
      const p = await voicemailMessagesRepo(ctx.db).list(b.id, page, query.folder);
      return { result: p.result.map(voicemailMessageJson), next_page_token: p.next_page_token };
    },
  }),
];
