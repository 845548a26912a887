/**
 * /calls: outgoing calls and the commands on a live call. POST /calls checks everything first
 * (control-api/calls/plan.ts), writes the Call rows (dialing, outgoing) and, when the flow is inline
 * actions, a non-listed flow for them, all in one transaction; then enqueues one call.originate.
 * One Call per destination; an extension or agent destination's Call is wrapped in a groupcall
 * (ring_all, hangup_others) that media-app rings (groupcall.start), listed in `groupcalls`.
 *
 * Live-call commands go to the owner node's queue (core/commands/bus.ts). Without a live owner the
 * call is CALL_NOT_FOUND, except a call still waiting for its originate to be picked up, which
 * hangup cancels here (media-app skips originating calls that are no longer dialing).
 */
import { newCallFields, resolveCallFlow } from '../calls/flow';
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { ApiError } from '../../core/errors';
import { EMPTY_UUID, newId } from '../../core/ids';
import { clock } from '../../core/clock';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { callJson, callsRepo, type CallRow } from '../../core/repos/calls';
import { chargeEndedCall } from '../../core/billing/call-end';
import { eventPublisher } from '../../core/events/bus';
import type { MuteDirection } from '../../core/commands/contracts';
import { commandBus } from '../calls/bus';
import { admitPstnLegs, planLegs } from '../calls/plan';
import { amd as amdOption } from '../../core/flow/options/media';
import { ORIGINATE_QUEUE } from '../../core/commands/contracts';
import { publishResourceEvent } from '../../core/events/catalogue';
import { groupcallJson, type GroupcallRow } from '../../core/repos/groupcalls';
import { GROUPCALL_ADDRESS_TYPES, wrapInGroupcall } from '../../core/groupcalls/write';
import type { AppContext, AuthContext } from '../context';
import { addressSchema, listOf, rfc3339OrNull, uuidOut } from './schemas';

const directionQuality = z
  .object({
    mos_min: z.number().describe("lowest MOS of the 5 s samples (ITU-T G.107 E-model, 1-4.5; on the fsmrf backend of the switch's loss and jitter)"),
    mos_avg: z.number().describe('mean MOS of the samples'),
    loss_pct: z.number().describe('packets lost in the network, % (mean of the samples)'),
    jitter_ms: z
      .number()
      .nullable()
      .describe('RFC 3550 interarrival jitter, ms (mean of the samples; on the fsmrf backend the spread of packet arrivals the switch reports); null when the media server reports none'),
    rtt_ms: z.number().nullable().describe('round-trip time from RTCP, ms; null when the party sends no RTCP reports'),
  })
  .nullable();

const callQualitySchema = z
  .object({
    codec: z.string(),
    in: directionQuality.describe('audio the platform received from the party (measured by the media engine, or by the switch on the fsmrf media backend)'),
    out: directionQuality.describe("audio the party received from the platform (from the party's RTCP reports; null without them)"),
  })
  .nullable()
  .describe('extension: media quality of the call, written at hangup (docs/observability.md "Call quality"); null while live or without media');

export const callSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  owner_type: z.string(),
  owner_id: uuidOut(),
  flow_id: uuidOut(),
  activeflow_id: uuidOut(),
  type: z.string(),
  master_call_id: uuidOut(),
  chained_call_ids: z.array(z.string()),
  recording_id: uuidOut(),
  recording_ids: z.array(z.string()),
  groupcall_id: uuidOut(),
  source: addressSchema,
  destination: addressSchema,
  status: z.enum(['dialing', 'ringing', 'progressing', 'terminating', 'canceling', 'hangup']),
  metadata: z.record(z.string(), z.unknown()),
  direction: z.enum(['incoming', 'outgoing']),
  mute_direction: z.enum(['', 'both', 'in', 'out']),
  hangup_by: z.string(),
  hangup_reason: z.string(),
  tm_ringing: rfc3339OrNull(),
  tm_progressing: rfc3339OrNull(),
  tm_hangup: rfc3339OrNull(),
  tm_create: rfc3339OrNull(),
  tm_update: rfc3339OrNull(),
  tm_delete: rfc3339OrNull(),
  node_id: z.string().describe('extension: the media node holding the call, an opaque name (node-<10 hex>); empty before a node takes it'),
  quality: callQualitySchema,
});

export const createBody = z.object({
  ...newCallFields,
  anonymous: z.enum(['yes', 'no', 'auto']).optional().describe('tel destinations only; default auto'),
  amd: amdOption.strict().optional().describe("answering machine detection on answer (the amd action's options), then the flow (docs/speech.md)"),
});

const callNotFound = () => new ApiError('CALL_NOT_FOUND', 'call not found');
const alreadyHangup = () => new ApiError('CALL_ALREADY_HANGUP', 'the call has already ended');

async function owned(ctx: AppContext, auth: AuthContext, id: string): Promise<CallRow> {
  const c = await callsRepo(ctx.db).getOwned(auth.customerId, id);
  if (!c) throw callNotFound();
  return c;
}

/** A call that can take a media command: not ended, answered. */
export async function progressing(ctx: AppContext, auth: AuthContext, id: string): Promise<CallRow> {
  const c = await owned(ctx, auth, id);
  if (c.status === 'hangup') throw alreadyHangup();
  if (c.status !== 'progressing') throw new ApiError('CALL_STATE_INVALID', `the call is ${c.status}, not progressing`);
  return c;
}

/** Soft-deletes an ended call and publishes call_deleted; null when it was deleted meanwhile. */
export async function deleteEndedCall(ctx: AppContext, c: CallRow): Promise<CallRow | null> {
  const row = await callsRepo(ctx.db).softDelete(c.id, clock.now());
  if (row) await publish(ctx, 'call_deleted', [row]);
  return row;
}

async function publish(ctx: AppContext, type: string, calls: CallRow[]): Promise<void> {
  try {
    const p = eventPublisher(ctx);
    for (const c of calls) await p.publish(type, c.customer_id, c.id, callJson(c));
  } catch (err) {
    ctx.logger.warn({ err }, `could not publish ${type}`);
  }
}

export async function send(ctx: AppContext, command: Parameters<ReturnType<typeof commandBus>['toCallOwner']>[0]): Promise<void> {
  const sent = await commandBus(ctx).toCallOwner(command);
  if (!sent) throw callNotFound();
}

const muteBody = z.object({ direction: z.enum(['in', 'out', 'both']).optional().describe('default both') });

function muteRoute(on: boolean) {
  return defineRoute({
    method: on ? 'post' : 'delete',
    path: '/calls/:id/mute',
    tag: 'Call',
    summary: on ? 'Mute the call' : 'Unmute the call',
    permission: 'manager',
    params: idParams,
    body: muteBody,
    response: callSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const c = await progressing(ctx, auth, params.id);
      const direction: MuteDirection = body.direction ?? 'both';
      await send(ctx, { type: 'call.mute', callId: c.id, direction, on });
      return callJson(c);
    },
  });
}

const recordingBody = z.object({
  format: z.enum(['wav', '']).optional(),
  end_of_silence: z.number().int().min(0).max(86_400).optional().describe('seconds; 0 = off'),
  end_of_key: z
    .string()
    .regex(/^[0-9A-D#*]?$/, 'must be one DTMF key or empty')
    .optional(),
  duration: z
    .number()
    .int()
    .min(0)
    .max(86_400 * 7)
    .optional()
    .describe('seconds; 0 = no cap'),
  on_end_flow_id: uuid().optional(),
});

function recordingStart(path: string) {
  return defineRoute({
    method: 'post',
    path,
    tag: 'Call',
    summary: 'Start recording the call',
    permission: 'manager',
    params: idParams,
    body: recordingBody,
    response: callSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const c = await progressing(ctx, auth, params.id);
      if (c.recording_id && c.recording_id !== EMPTY_UUID) throw new ApiError('RECORDING_ALREADY_ACTIVE', 'the call is already being recorded');
      const onEnd = body.on_end_flow_id ?? EMPTY_UUID;
      if (onEnd !== EMPTY_UUID && !(await flowsRepo(ctx.db).getOwned(auth.customerId, onEnd))) {
        throw new ApiError('FLOW_NOT_FOUND', 'on_end_flow_id: flow not found', { details: [{ field: 'on_end_flow_id' }] });
      }
      await send(ctx, {
        type: 'call.recording_start',
        callId: c.id,
        recordingId: newId(),
        options: { format: 'wav', end_of_silence: body.end_of_silence ?? 0, end_of_key: body.end_of_key ?? '', duration: body.duration ?? 0, on_end_flow_id: onEnd },
      });
      return callJson(c);
    },
  });
}

function recordingStop(path: string) {
  return defineRoute({
    method: 'post',
    path,
    tag: 'Call',
    summary: 'Stop the active recording',
    permission: 'manager',
    params: idParams,
    response: callSchema,
    handler: async ({ ctx, auth, params }) => {
      const c = await progressing(ctx, auth, params.id);
      if (!c.recording_id || c.recording_id === EMPTY_UUID) throw new ApiError('RECORDING_NOT_ACTIVE', 'the call has no active recording');
      await send(ctx, { type: 'call.recording_stop', callId: c.id });
      return callJson(c);
    },
  });
}

/**
 * Writes the Call rows of a POST /calls request and has them dialled (see the file's comment).
 * `forcedProviderId` (POST /providercalls): tel legs go through that provider only, whatever the
 * routes say (data.forced_provider_id, honoured by media-app/outbound/targets.ts).
 */
export async function createCalls(
  ctx: AppContext,
  cid: string,
  body: z.infer<typeof createBody>,
  opts: { forcedProviderId?: string; data?: Record<string, unknown> } = {},
): Promise<{ calls: CallRow[]; groupcalls: GroupcallRow[] }> {
  const resolved = await resolveCallFlow(ctx, cid, body);
  const vars = { variables: resolved.variables };
  let flowId = resolved.flowId;
  let actions = resolved.actions;
  if (body.amd) {
    // AMD on answer: the call runs its flow behind an amd action, in a non-listed flow of its own
    const base = actions ?? (await flowsRepo(ctx.db).getOwned(cid, flowId))?.actions ?? [];
    actions = parseActions([{ type: 'amd', option: body.amd }, ...base], { egress: ctx.egress });
    flowId = newId();
  }
  const legs = await planLegs(ctx, cid, body.source, body.destinations);
  const anonymous = body.anonymous ?? 'auto';
  const groupcalls: GroupcallRow[] = [];
  const calls = await ctx.db.transaction(async (trx) => {
    if (actions) await flowsRepo(trx).create({ id: flowId, customer_id: cid, actions, persist: false, name: 'call' });
    const repo = callsRepo(trx);
    const rows: CallRow[] = [];
    for (const leg of legs) {
      rows.push(
        await repo.create({
          customer_id: cid,
          source: leg.source,
          destination: leg.destination,
          direction: 'outgoing',
          status: 'dialing',
          type: 'flow',
          flow_id: flowId,
          data: {
            variables: vars.variables,
            anonymous: leg.destination.type === 'tel' ? anonymous : 'no',
            early_execution: false,
            ...(opts.forcedProviderId ? { forced_provider_id: opts.forcedProviderId } : {}),
            ...opts.data,
          },
          metadata: leg.metadata,
        }),
      );
    }
    // toll fraud: PSTN legs count against the customer's concurrency cap, all or none (429)
    await admitPstnLegs(trx, cid, rows);
    // extension and agent destinations ring as groupcalls (control-api/routes/groupcalls.ts)
    for (const [i, r] of rows.entries()) {
      if (!GROUPCALL_ADDRESS_TYPES.has(r.destination.type)) continue;
      const w = await wrapInGroupcall(trx, r);
      rows[i] = w.call;
      groupcalls.push(w.groupcall);
    }
    return rows;
  });
  try {
    const single = calls.filter((c) => c.groupcall_id === EMPTY_UUID).map((c) => c.id);
    if (single.length) await commandBus(ctx).originate(single, cid);
    for (const g of groupcalls) await commandBus(ctx).enqueue(ORIGINATE_QUEUE, { type: 'groupcall.start', groupcallId: g.id, customerId: cid });
  } catch (err) {
    // Nothing will dial them: end the rows so they do not stay dialing forever.
    for (const c of calls) await callsRepo(ctx.db).hangup(c.id, 'failure', [chargeEndedCall]);
    throw err;
  }
  await publish(ctx, 'call_created', calls);
  for (const g of groupcalls) await publishResourceEvent(eventPublisher(ctx), 'groupcall_created', groupcallJson(g) as never).catch(() => undefined);
  return { calls, groupcalls };
}

/**
 * Hangs up a live call (the route below, Twilio's Status=completed|canceled): call.hangup to its owner
 * node, or, when its originate has not been picked up yet, canceled here. Returns the row as it was
 * sent the command, or as ended here.
 */
export async function hangupCall(ctx: AppContext, c: CallRow): Promise<CallRow> {
  if (c.status === 'hangup') throw alreadyHangup();
  const sent = await commandBus(ctx).toCallOwner({ type: 'call.hangup', callId: c.id });
  if (sent) return c;
  if (c.status === 'dialing' && c.node_id === '') {
    // Its originate has not been picked up: cancel it here (hangup_by local, reason cancel).
    const repo = callsRepo(ctx.db);
    await repo.transition(c.id, 'canceling');
    const t = await repo.hangup(c.id, 'normal_clearing', [chargeEndedCall]);
    if (t.changed && t.call) await publish(ctx, 'call_hangup', [t.call]);
    const now = t.call ?? (await repo.get(c.id));
    if (now && now.status === 'hangup') return now;
  }
  throw callNotFound();
}

export const routes = [
  defineRoute({
    method: 'post',
    path: '/calls',
    tag: 'Call',
    summary: 'Make outgoing calls (one per destination) running a flow',
    permission: 'manager',
    body: createBody,
    response: z.object({ calls: z.array(callSchema), groupcalls: z.array(z.record(z.string(), z.unknown())).describe('one per extension or agent destination') }),
    handler: async ({ ctx, auth, body }) => {
      const { calls, groupcalls } = await createCalls(ctx, auth.customerId, body);
      return { calls: calls.map(callJson), groupcalls: groupcalls.map(groupcallJson) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/calls',
    tag: 'Call',
    summary: 'List calls',
    permission: 'manager',
    paginated: true,
    response: listOf(callSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await callsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(callJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/calls/:id',
    tag: 'Call',
    summary: 'Get a call',
    permission: 'manager',
    params: idParams,
    response: callSchema,
    handler: async ({ ctx, auth, params }) => callJson(await owned(ctx, auth, params.id)),
  }),
  defineRoute({
    method: 'delete',
    path: '/calls/:id',
    tag: 'Call',
    summary: 'Delete an ended call (soft); a live call must be hung up first',
    permission: 'manager',
    params: idParams,
    response: callSchema,
    handler: async ({ ctx, auth, params }) => {
      const c = await owned(ctx, auth, params.id);
      if (c.status !== 'hangup') throw new ApiError('CALL_STATE_INVALID', `the call is ${c.status}; hang it up first`);
      const row = await deleteEndedCall(ctx, c);
      if (!row) throw callNotFound();
      return callJson(row);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/calls/:id/hangup',
    tag: 'Call',
    summary: 'Hang up the call',
    permission: 'manager',
    params: idParams,
    response: callSchema,
    handler: async ({ ctx, auth, params }) => callJson(await hangupCall(ctx, await owned(ctx, auth, params.id))),
  }),
  muteRoute(true),
  muteRoute(false),
  recordingStart('/calls/:id/recording_start'),
  recordingStart('/calls/:id/recording-start'),
  recordingStop('/calls/:id/recording_stop'),
  recordingStop('/calls/:id/recording-stop'),
];
