/**
 * Hold, music on hold, one-way silence and talk on a live call: checked here (the call is the
 * customer's and progressing), carried out by the node that owns it (media-app/call/controls.ts,
 * commands in core/commands/protocol.ts), which writes the state into the call's metadata
 * (`hold`, `moh`, `silence`) and publishes call_updated. Each answers the call as it stands.
 */
import { z } from 'zod';
import { defineRoute, idParams, type AnyRoute } from '../route';
import { invalidArgument } from '../../core/errors';
import { callJson } from '../../core/repos/calls';
import { checkTtsLanguage, checkTtsProvider } from '../../core/speech/providers';
import { espeakVoiceFor } from '../../media-engine';
import { callSchema, progressing, send } from './calls';
import { assertEgressUrl } from '../egress-field';

/** An http(s) URL of audio (WAV or MP3) the media engine fetches through the egress policy, or ''. */
export const musicUrl = z
  .string()
  .max(2048)
  .refine((v) => v === '' || /^https?:\/\/\S+$/i.test(v), 'must be an http or https URL, or empty');

const holdBody = z.strictObject({
  music: musicUrl.optional().describe("what the held party hears: a WAV or MP3 URL in a loop; '' none (a=inactive); absent: the customer's moh_url, else the platform's music"),
});

type Toggle = 'call.hold' | 'call.moh' | 'call.silence';

function toggle(path: string, type: Toggle, on: boolean, summary: string): AnyRoute {
  return defineRoute({
    method: on ? 'post' : 'delete',
    path,
    tag: 'Call',
    summary,
    permission: 'manager',
    params: idParams,
    response: callSchema,
    handler: async ({ ctx, auth, params }) => {
      const c = await progressing(ctx, auth, params.id);
      await send(ctx, { type, callId: c.id, on });
      return callJson(c);
    },
  });
}

const talkBody = z.object({
  text: z.string().trim().min(1, 'text is required').max(5000).describe('plain text or SSML (<speak>...)'),
  language: z.string().max(35).optional().describe('BCP-47; default en-US'),
  provider: z.string().max(64).optional().describe("'' or provider_a (espeak-ng, default), provider_b, provider_c; gcp and aws are not available"),
  voice_id: z.string().max(128).optional().describe("'male', 'female' or a native voice name of the provider"),
});

export const routes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/calls/:id/hold',
    tag: 'Call',
    summary: 'Hold the call: its party hears music on hold (re-INVITE a=sendonly), or nothing with music "" (a=inactive)',
    permission: 'manager',
    params: idParams,
    body: holdBody,
    response: callSchema,
    handler: async ({ ctx, auth, params, body }) => {
      assertEgressUrl(ctx, 'music', body.music);
      const c = await progressing(ctx, auth, params.id);
      await send(ctx, { type: 'call.hold', callId: c.id, on: true, ...(body.music !== undefined ? { music: body.music } : {}) });
      return callJson(c);
    },
  }),
  toggle('/calls/:id/hold', 'call.hold', false, 'Unhold the call (re-INVITE: a=sendrecv)'),
  toggle('/calls/:id/moh', 'call.moh', true, "Play music on hold to the call's party, in a loop"),
  toggle('/calls/:id/moh', 'call.moh', false, 'Stop the music on hold'),
  toggle('/calls/:id/silence', 'call.silence', true, 'Silence the call: its party hears nothing; its audio is still received and recorded'),
  toggle('/calls/:id/silence', 'call.silence', false, 'End the silence'),
  defineRoute({
    method: 'post',
    path: '/calls/:id/talk',
    tag: 'Call',
    summary: "Speak text into the live call (the platform's TTS), after what already plays",
    permission: 'manager',
    params: idParams,
    body: talkBody,
    response: callSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const provider = checkTtsProvider(body.provider);
      const language = checkTtsLanguage(body.language, espeakVoiceFor);
      if (body.voice_id && !/^[A-Za-z0-9+_-]{1,64}$/.test(body.voice_id)) throw invalidArgument('voice_id has characters a voice name cannot have', [{ field: 'voice_id' }]);
      const c = await progressing(ctx, auth, params.id);
      await send(ctx, { type: 'call.talk', callId: c.id, text: body.text, language, provider, voiceId: body.voice_id ?? '' });
      return callJson(c);
    },
  }),
];
