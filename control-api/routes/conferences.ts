/**
 * /conferences: rooms (type conference) and two-party connects (type connect). POST writes the row
 * (starting) and asks a media-app node to host it (core/conferences/commands.ts); the host moves it
 * to progressing. DELETE, recordings and kicks go to the hosting node. Decisions: docs/conferences.md.
 */
import { z } from 'zod';
import { defineRoute, idParams, text, uuid } from '../route';
import { ApiError } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { flowsRepo } from '../../core/repos/flows';
import { conferenceJson, conferencesRepo } from '../../core/repos/conferences';
import { CONFERENCE_STATUSES, CONFERENCE_TYPES, normalizeTimeout } from '../../core/conferences/model';
import { ConferenceApi, conferenceNotFound } from '../../core/conferences/api';
import { publishConference } from '../../core/conferences/events';
import { eventPublisher } from '../../core/events/bus';
import { commandBus } from '../calls/bus';
import type { AppContext } from '../context';
import { writeNewDirectHash } from '../direct-hash';
import { legacyTime, listOf, uuidOut } from './schemas';

export const conferenceSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  type: z.enum(['', 'conference', 'connect', 'queue']),
  status: z.enum(CONFERENCE_STATUSES),
  name: z.string(),
  detail: z.string(),
  data: z.record(z.string(), z.unknown()),
  timeout: z.number().int(),
  pre_flow_id: uuidOut(),
  post_flow_id: uuidOut(),
  conferencecall_ids: z.array(uuidOut()),
  recording_id: uuidOut(),
  recording_ids: z.array(uuidOut()),
  transcribe_id: uuidOut(),
  transcribe_ids: z.array(uuidOut()),
  direct_hash: z.string(),
  tm_end: legacyTime(),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

/** A flow reference: a UUID, or '' for none. */
const flowRef = () => z.union([uuid(), z.literal('')]);

const fields = {
  name: text().optional(),
  detail: text(1024).optional(),
  data: z.record(z.string(), z.unknown()).optional().describe('reserved: stored and returned as given'),
  timeout: z
    .number()
    .int()
    .min(0)
    .max(86_400 * 365)
    .optional()
    .describe('seconds; 0 = none; 1–59 become 86400'),
  pre_flow_id: flowRef().optional().describe('flow run before a participant enters'),
  post_flow_id: flowRef().optional().describe('flow run after a participant leaves'),
};

const createBody = z.object({
  type: z.enum(CONFERENCE_TYPES),
  id: uuid().optional().describe('client-chosen id'),
  ...fields,
});
const updateBody = z.object(fields);

export function conferenceApi(ctx: AppContext): ConferenceApi {
  return new ConferenceApi({ db: ctx.db, redis: ctx.redis, bus: commandBus(ctx), keyPrefix: ctx.config.redisKeyPrefix, logger: ctx.logger });
}

/** A flow id from the body: '' or absent → empty UUID; otherwise the customer's flow, or FLOW_NOT_FOUND. */
async function flowId(ctx: AppContext, customerId: string, field: string, v: string | undefined): Promise<string | undefined> {
  if (v === undefined) return undefined;
  if (v === '' || v === EMPTY_UUID) return EMPTY_UUID;
  if (!(await flowsRepo(ctx.db).getOwned(customerId, v))) throw new ApiError('FLOW_NOT_FOUND', `${field}: flow not found`, { details: [{ field }] });
  return v;
}

const recordingBody = z.object({
  format: z.enum(['wav', '']).optional(),
  duration: z
    .number()
    .int()
    .min(0)
    .max(86_400 * 7)
    .optional()
    .describe('seconds; 0 = no cap'),
  on_end_flow_id: flowRef().optional(),
  end_of_silence: z.number().int().min(0).max(86_400).optional().describe('accepted as for calls; a conference mix never ends on silence'),
  end_of_key: z
    .string()
    .regex(/^[0-9A-D#*]?$/, 'must be one DTMF key or empty')
    .optional()
    .describe('accepted as for calls; ignored for a mix'),
});

function recordingStart(path: string) {
  return defineRoute({
    method: 'post',
    path,
    tag: 'Conference',
    summary: 'Record the conference (the whole mix, WAV 8 kHz mono)',
    permission: 'manager',
    params: idParams,
    body: recordingBody,
    response: conferenceSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const onEnd = (await flowId(ctx, auth.customerId, 'on_end_flow_id', body.on_end_flow_id)) ?? EMPTY_UUID;
      const row = await conferenceApi(ctx).recordingStart(auth.customerId, params.id, {
        format: 'wav',
        end_of_silence: 0,
        end_of_key: '',
        duration: body.duration ?? 0,
        on_end_flow_id: onEnd,
      });
      return conferenceJson(row);
    },
  });
}

function recordingStop(path: string) {
  return defineRoute({
    method: 'post',
    path,
    tag: 'Conference',
    summary: 'Stop the conference recording',
    permission: 'manager',
    params: idParams,
    response: conferenceSchema,
    handler: async ({ ctx, auth, params }) => conferenceJson(await conferenceApi(ctx).recordingStop(auth.customerId, params.id)),
  });
}

export const routes = [
  defineRoute({
    method: 'post',
    path: '/conferences',
    tag: 'Conference',
    summary: 'Create a conference (returned at once with status starting)',
    permission: 'manager',
    body: createBody,
    response: conferenceSchema,
    handler: async ({ ctx, auth, body }) => {
      const cid = auth.customerId;
      const row = await conferenceApi(ctx).create({
        id: body.id,
        customer_id: cid,
        type: body.type,
        name: body.name ?? '',
        detail: body.detail ?? '',
        data: body.data ?? {},
        timeout: normalizeTimeout(body.timeout ?? 0),
        pre_flow_id: (await flowId(ctx, cid, 'pre_flow_id', body.pre_flow_id)) ?? EMPTY_UUID,
        post_flow_id: (await flowId(ctx, cid, 'post_flow_id', body.post_flow_id)) ?? EMPTY_UUID,
      });
      return conferenceJson(row);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/conferences',
    tag: 'Conference',
    summary: 'List conferences',
    permission: 'manager',
    paginated: true,
    response: listOf(conferenceSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await conferencesRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(conferenceJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/conferences/:id',
    tag: 'Conference',
    summary: 'Get a conference',
    permission: 'manager',
    params: idParams,
    response: conferenceSchema,
    handler: async ({ ctx, auth, params }) => {
      const row = await conferencesRepo(ctx.db).getOwned(auth.customerId, params.id);
      if (!row) throw conferenceNotFound();
      return conferenceJson(row);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/conferences/:id',
    tag: 'Conference',
    summary: 'Update a conference (type cannot change)',
    permission: 'manager',
    params: idParams,
    body: updateBody,
    response: conferenceSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const cid = auth.customerId;
      const repo = conferencesRepo(ctx.db);
      if (!(await repo.getOwned(cid, params.id))) throw conferenceNotFound();
      const row = await repo.change(params.id, {
        name: body.name,
        detail: body.detail,
        data: body.data,
        timeout: body.timeout === undefined ? undefined : normalizeTimeout(body.timeout),
        pre_flow_id: await flowId(ctx, cid, 'pre_flow_id', body.pre_flow_id),
        post_flow_id: await flowId(ctx, cid, 'post_flow_id', body.post_flow_id),
      });
      if (!row) throw conferenceNotFound();
      if (body.timeout !== undefined) await conferenceApi(ctx).refresh(row.id);
      await publishConference(eventPublisher(ctx), 'conference_updated', row).catch((err: Error) => ctx.logger.warn({ err: err.message }, 'could not publish conference_updated'));
      return conferenceJson(row);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/conferences/:id',
    tag: 'Conference',
    summary: 'Delete a conference: it terminates, every participant is removed',
    permission: 'manager',
    params: idParams,
    response: conferenceSchema,
    handler: async ({ ctx, auth, params }) => conferenceJson(await conferenceApi(ctx).remove(auth.customerId, params.id)),
  }),
  defineRoute({
    method: 'post',
    path: '/conferences/:id/direct-hash-regenerate',
    tag: 'Conference',
    summary: 'Give the conference a new direct hash (the old one stops naming it)',
    permission: 'manager',
    params: idParams,
    response: conferenceSchema,
    handler: async ({ ctx, auth, params }) => {
      const repo = conferencesRepo(ctx.db);
      if (!(await repo.getOwned(auth.customerId, params.id))) throw conferenceNotFound();
      const row = await writeNewDirectHash('conferences_direct_hash_uq', (direct_hash) => repo.change(params.id, { direct_hash }));
      if (!row) throw conferenceNotFound();
      await publishConference(eventPublisher(ctx), 'conference_updated', row).catch((err: Error) => ctx.logger.warn({ err: err.message }, 'could not publish conference_updated'));
      return conferenceJson(row);
    },
  }),
  recordingStart('/conferences/:id/recording_start'),
  recordingStart('/conferences/:id/recording-start'),
  recordingStop('/conferences/:id/recording_stop'),
  recordingStop('/conferences/:id/recording-stop'),
];
