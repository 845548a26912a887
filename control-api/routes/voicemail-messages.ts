/**
 * /voicemail_messages/{id} (an extension of the reference API, issue 37): get, its audio (`/media`,
 * audio/wav), move between folders (PUT folder new|old: mark unread/read), delete (soft, the file
 * removed). Every change of a box's counts publishes the MWI notice (core/voicemail/mwi.ts).
 */
import { z } from 'zod';
import { defineRoute, idParams } from '../route';
import { notFound } from '../../core/errors';
import { eventPublisher } from '../../core/events/bus';
import { publishResourceEvent } from '../../core/events/catalogue';
import { storageBackend, viaStorage } from '../../core/storage/backend';
import { voicemailBoxesRepo } from '../../core/voicemail/boxes';
import { FOLDERS, voicemailMessagesRepo, voicemailMessageJson, type VoicemailMessageRow } from '../../core/voicemail/messages';
import { publishMwiChange } from '../../core/voicemail/mwi';
import type { AppContext } from '../context';
import { sendCustomerFile } from '../customer-file';

export const voicemailMessageSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  box_id: z.string(),
  folder: z.enum(FOLDERS),
  urgent: z.boolean(),
  caller_type: z.string(),
  caller_number: z.string(),
  caller_name: z.string(),
  call_id: z.string(),
  recording_id: z.string(),
  duration: z.number().describe('milliseconds'),
  transcript: z.string(),
  summary: z.string().describe("the AI summary of the transcript (a box with ai_summary); '' when none"),
  summary_error: z.string().describe('why a box with ai_summary has no summary of this message'),
  tm_create: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});
const missing = () => notFound('RESOURCE_NOT_FOUND', 'voicemail message not found');
const tag = 'VoicemailMessage';

async function changed(ctx: AppContext, type: 'voicemail_message_updated' | 'voicemail_message_deleted', m: VoicemailMessageRow): Promise<void> {
  const box = await voicemailBoxesRepo(ctx.db).get(m.customer_id, m.box_id);
  if (box) await publishMwiChange(ctx.db, ctx.redis, ctx.config.redisKeyPrefix, box);
  await publishResourceEvent(eventPublisher(ctx), type, voicemailMessageJson(m)).catch((err: Error) => ctx.logger.warn({ err: err.message, type }, 'event publish failed'));
}

export const routes = [
  defineRoute({
    method: 'get',
    path: '/voicemail_messages/:id',
    tag,
    summary: 'Get a voicemail message',
    permission: 'agent',
    params: idParams,
    response: voicemailMessageSchema,
    handler: async ({ ctx, auth, params }) => {
      const m = await voicemailMessagesRepo(ctx.db).get(auth.customerId, params.id);
      if (!m) throw missing();
      return voicemailMessageJson(m);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/voicemail_messages/:id/media',
    tag,
    summary: 'Download the audio of a voicemail message (audio/wav)',
    permission: 'agent',
    params: idParams,
    response: z.any().describe('audio/wav'),
    handler: async ({ ctx, auth, params, res }) => {
      const m = await voicemailMessagesRepo(ctx.db).get(auth.customerId, params.id);
      if (!m) throw missing();
      const obj = await viaStorage(() => storageBackend(ctx.config).recordings.open(m.filename));
      if (!obj) throw notFound('FILE_NOT_FOUND', 'voicemail audio not found');
      await sendCustomerFile(res, { filename: `voicemail-${m.id}.wav`, contentType: 'audio/wav' }, obj);
      return undefined;
    },
  }),
  defineRoute({
    method: 'put',
    path: '/voicemail_messages/:id',
    tag,
    summary: 'Move a voicemail message between folders (new: unread, old: read)',
    permission: 'agent',
    params: idParams,
    body: z.object({ folder: z.enum(FOLDERS) }),
    response: voicemailMessageSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const r = await voicemailMessagesRepo(ctx.db).move(auth.customerId, params.id, body.folder);
      if (!r) throw missing();
      if (r.changed) await changed(ctx, 'voicemail_message_updated', r.row);
      return voicemailMessageJson(r.row);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/voicemail_messages/:id',
    tag,
    summary: 'Delete a voicemail message (soft; its audio file is removed)',
    permission: 'agent',
    params: idParams,
    response: voicemailMessageSchema,
    handler: async ({ ctx, auth, params }) => {
      const repo = voicemailMessagesRepo(ctx.db);
      const live = await repo.get(auth.customerId, params.id);
      if (!live) throw missing();
      // The file first: when storage refuses, the message stays (503) and the delete can be retried.
      await viaStorage(() => storageBackend(ctx.config).recordings.remove(live.filename));
      const m = await repo.softDelete(auth.customerId, params.id);
      if (!m) throw missing();
      await changed(ctx, 'voicemail_message_deleted', m);
      return voicemailMessageJson(m);
    },
  }),
];
