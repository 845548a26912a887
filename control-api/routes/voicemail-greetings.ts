/**
 * /voicemail_boxes/{id}/greetings/{kind} (an extension of the reference API, issue 37): upload a
 * greeting (multipart/form-data, part `file`: a WAV of 0.5 to 120 s) or remove it; `kind` is
 * unavailable, busy or name. The file joins the recordings store beside the greetings recorded by
 * phone (voicemail_main, option 0), and replaces the one before.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineRoute, uuid } from '../route';
import { invalidArgument, notFound } from '../../core/errors';
import { eventPublisher } from '../../core/events/bus';
import { publishResourceEvent } from '../../core/events/catalogue';
import { newId } from '../../core/ids';
import { storageBackend } from '../../core/storage/backend';
import { recordingPath } from '../../core/storage/local';
import { voicemailBoxesRepo, voicemailBoxJson, type GreetingKind, type VoicemailBoxRow } from '../../core/voicemail/boxes';
import { readWav } from '../../media-engine';
import type { AppContext } from '../context';
import { readUpload } from '../upload';
import { boxSchema } from './voicemail-boxes';

const MAX_GREETING_BYTES = 5 * 1024 * 1024;
const MIN_MS = 500;
const MAX_MS = 120_000;
const params = z.object({ id: uuid().describe('voicemail box id (UUID)'), kind: z.enum(['unavailable', 'busy', 'name']) });
const missing = () => notFound('RESOURCE_NOT_FOUND', 'voicemail box not found');
const tag = 'VoicemailBox';

/** The greeting's duration, or a 400 naming the file part when it is not a WAV we can play. */
async function checkedDuration(file: string): Promise<number> {
  let ms: number;
  try {
    ms = readWav(file).info.durationMs;
  } catch (e) {
    throw invalidArgument(`file: not a WAV file we can play (${(e as Error).message})`, [{ field: 'file', issue: 'not a WAV file' }]);
  }
  if (ms < MIN_MS || ms > MAX_MS) throw invalidArgument(`file: a greeting lasts 0.5 to 120 s, this one ${Math.round(ms)} ms`, [{ field: 'file', issue: 'duration' }]);
  return ms;
}

async function replaced(ctx: AppContext, before: VoicemailBoxRow, after: VoicemailBoxRow, kind: GreetingKind) {
  const old = before[`greeting_${kind}`];
  if (old && old !== after[`greeting_${kind}`])
    await storageBackend(ctx.config)
      .recordings.remove(old)
      .catch(() => undefined);
  const json = voicemailBoxJson(after);
  await publishResourceEvent(eventPublisher(ctx), 'voicemail_box_updated', json).catch((err: Error) => ctx.logger.warn({ err: err.message }, 'event publish failed'));
  return json;
}

export const routes = [
  defineRoute({
    method: 'put',
    path: '/voicemail_boxes/:id/greetings/:kind',
    tag,
    summary: 'Upload a greeting of a voicemail box (multipart/form-data: file, a WAV of 0.5 to 120 s)',
    permission: 'manager',
    params,
    rawBody: true,
    contentTypes: ['multipart/form-data'],
    response: boxSchema,
    handler: async ({ ctx, auth, params: p, req }) => {
      const repo = voicemailBoxesRepo(ctx.db);
      const box = await repo.get(auth.customerId, p.id);
      if (!box) throw missing();
      const up = await readUpload(req, { maxBytes: MAX_GREETING_BYTES });
      const filename = `vmg-${box.id}-${p.kind}-${newId()}.wav`;
      const file = recordingPath(ctx.config.dataDir, filename);
      if (!file) throw new Error('greeting path refused');
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, up.data);
      try {
        await checkedDuration(file);
        const after = await repo.setGreeting(auth.customerId, box.id, p.kind, filename);
        if (!after) throw missing();
        return await replaced(ctx, box, after, p.kind);
      } catch (e) {
        // nothing is kept of a refused upload
        await fs.rm(file, { force: true });
        throw e;
      }
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/voicemail_boxes/:id/greetings/:kind',
    tag,
    summary: 'Remove a greeting of a voicemail box (its text or the default is spoken again)',
    permission: 'manager',
    params,
    response: boxSchema,
    handler: async ({ ctx, auth, params: p }) => {
      const repo = voicemailBoxesRepo(ctx.db);
      const box = await repo.get(auth.customerId, p.id);
      if (!box) throw missing();
      const after = await repo.setGreeting(auth.customerId, box.id, p.kind, '');
      if (!after) throw missing();
      return replaced(ctx, box, after, p.kind);
    },
  }),
];
