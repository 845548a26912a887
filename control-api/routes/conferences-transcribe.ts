/**
 * POST /conferences/{id}/transcribe_start and /transcribe_stop: live transcription of a conference's
 * whole mix, the same transcribe as POST /transcribes with reference_type confbridge
 * (control-api/transcribes/start.ts), started by the node hosting the conference. The conference's
 * `transcribe_id` names the running one (empty UUID after the stop) and `transcribe_ids` every one
 * it had; each change is published as conference_updated.
 */
import { z } from 'zod';
import { defineRoute, idParams, type AnyRoute } from '../route';
import { stateInvalid } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { eventPublisher } from '../../core/events/bus';
import { conferenceNotFound } from '../../core/conferences/api';
import { publishConference } from '../../core/conferences/events';
import { conferencesRepo, type ConferenceUpdate } from '../../core/repos/conferences';
import { transcribeJson, transcribesRepo } from '../../core/repos/transcribes';
import { startTranscribe, stopTranscribe } from '../transcribes/start';
import type { AppContext } from '../context';
import { transcribeSchema } from './transcribes';

async function note(ctx: AppContext, id: string, patch: ConferenceUpdate): Promise<void> {
  const row = await conferencesRepo(ctx.db).change(id, patch);
  if (row) await publishConference(eventPublisher(ctx), 'conference_updated', row).catch((err: Error) => ctx.logger.warn({ err: err.message }, 'could not publish conference_updated'));
}

export const routes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/conferences/:id/transcribe_start',
    tag: 'Conference',
    summary: "Transcribe the conference's mixed audio (a transcribe with reference_type confbridge)",
    permission: 'manager',
    params: idParams,
    body: z.object({
      language: z.string().min(1, 'language is required').max(35).describe('BCP-47, e.g. en-US'),
      provider: z.string().max(64).optional().describe("'' or pocketsphinx (offline, default), deepgram"),
    }),
    response: transcribeSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const conf = await conferencesRepo(ctx.db).getOwned(auth.customerId, params.id);
      if (!conf) throw conferenceNotFound();
      const t = await startTranscribe(ctx, auth.customerId, { reference_type: 'confbridge', reference_id: conf.id, language: body.language, provider: body.provider });
      await note(ctx, conf.id, { transcribe_id: t.id, transcribe_ids: [...conf.transcribe_ids.filter((x) => x !== t.id), t.id] });
      return transcribeJson(t);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/conferences/:id/transcribe_stop',
    tag: 'Conference',
    summary: "Stop the conference's live transcribe (its segments stay in /transcripts)",
    permission: 'manager',
    params: idParams,
    response: transcribeSchema,
    handler: async ({ ctx, auth, params }) => {
      const conf = await conferencesRepo(ctx.db).getOwned(auth.customerId, params.id);
      if (!conf) throw conferenceNotFound();
      const t = await transcribesRepo(ctx.db).progressingOn(conf.id);
      if (!t || t.customer_id !== auth.customerId) throw stateInvalid('the conference is not being transcribed');
      const stopped = await stopTranscribe(ctx, t);
      if (conf.transcribe_id !== EMPTY_UUID) await note(ctx, conf.id, { transcribe_id: EMPTY_UUID });
      return transcribeJson(stopped);
    },
  }),
];
