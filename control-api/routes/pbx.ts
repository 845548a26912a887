/**
 * The PBX API (our extension, docs/pbx.md): the customer's feature codes (/pbx_settings) and its
 * parked calls (/parkedcalls: list, park a live call, retrieve one to an address). The slot table
 * is in Redis (core/pbx/park-slots.ts); a park is claimed here, then carried out by the node that
 * owns the call (park.call); a retrieve rings the address from the node holding the parked call.
 */
import { z } from 'zod';
import { defineRoute, uuid, type AnyRoute } from '../route';
import { ApiError, invalidArgument } from '../../core/errors';
import { DEFAULT_FEATURE_CODES, featureCodesProblem, isParkSlot, type FeatureCodes } from '../../core/pbx/feature-codes';
import { pbxSettingsRepo } from '../../core/pbx/settings';
import { parkSlots, type ParkedCall } from '../../core/pbx/park-slots';
import { commandBus } from '../calls/bus';
import { planLegs } from '../calls/plan';
import { progressing } from './calls';
import { addressSchema } from './schemas';
import type { AppContext } from '../context';
import { extensionStates, LAMP_STATES } from '../pbx/extension-states';

const code = z.string().regex(/^[0-9*#]{1,10}$/, 'digits, * and #, at most 10');

const settingsSchema = z.object({
  group_pickup: code.describe(`group pickup (default ${DEFAULT_FEATURE_CODES.group_pickup})`),
  directed_pickup_prefix: code.describe(`directed pickup: this prefix and an extension (default ${DEFAULT_FEATURE_CODES.directed_pickup_prefix})`),
  park_lot: code.describe(`the park lot: a blind transfer to it parks the other party (default ${DEFAULT_FEATURE_CODES.park_lot})`),
  park_slot_first: z.number().int().min(1).max(999_999),
  park_slot_last: z.number().int().min(1).max(999_999),
  park_timeout_sec: z.number().int().min(5).max(3600).describe('seconds parked before the parker is rung back (default 45)'),
  park_fallback: z.enum(['hangup']).describe('when the ring-back is not answered'),
  voicemail_own: code,
  voicemail_any: code,
  supervise_listen_prefix: code.describe(`supervisor: this prefix and an extension listens to its call (default ${DEFAULT_FEATURE_CODES.supervise_listen_prefix})`),
  supervise_whisper_prefix: code.describe(`supervisor: this prefix and an extension whispers to it (default ${DEFAULT_FEATURE_CODES.supervise_whisper_prefix})`),
  supervise_barge_prefix: code.describe(`supervisor: this prefix and an extension joins its call (default ${DEFAULT_FEATURE_CODES.supervise_barge_prefix})`),
  supervisor_extensions: z
    .array(z.string().regex(/^[0-9A-Za-z_.-]{1,32}$/, 'an extension number'))
    .max(500)
    .describe('the extensions whose phones may use the supervise codes (default none)'),
});

const parkedSchema = z.object({
  slot: z.number().int(),
  call_id: z.string(),
  customer_id: z.string(),
  node_id: z.string(),
  parker: addressSchema.nullable(),
  tm_parked: z.string(),
  tm_timeout: z.string(),
});

const dialogSchema = z.object({
  id: z.string(),
  state: z.enum(['trying', 'proceeding', 'early', 'confirmed', 'terminated']),
  direction: z.enum(['initiator', 'recipient', '']),
  remote: z.string().describe('the other party: sip:{extension}@{registration domain} or tel:{number}'),
  remote_name: z.string(),
  tm_start: z.string().describe("RFC 3339, '' when unknown"),
});
const extensionStateSchema = z.object({
  id: z.string(),
  extension: z.string(),
  name: z.string(),
  registered: z.boolean().describe('a phone holds a live registration'),
  state: z.enum(LAMP_STATES).describe('in_call: a dialog confirmed; ringing: one rings it; dialing: it calls out, not answered yet'),
  dialogs: z.array(dialogSchema),
});
const slotStateSchema = z.object({ slot: z.number().int(), state: z.enum(['free', 'occupied']), dialogs: z.array(dialogSchema) });

const slots = (ctx: AppContext) => parkSlots(ctx.redis, ctx.config.redisKeyPrefix);

/** The slot path parameter: one of the customer's slots (400 otherwise). */
async function slotOf(ctx: AppContext, customerId: string, raw: string): Promise<{ slot: number; codes: FeatureCodes }> {
  const codes = await pbxSettingsRepo(ctx.db).get(customerId);
  const slot = /^\d{1,6}$/.test(raw) ? Number(raw) : NaN;
  if (!isParkSlot(codes, slot)) throw invalidArgument(`slot must be one of ${codes.park_slot_first}-${codes.park_slot_last}`, [{ field: 'slot', issue: 'out of range' }]);
  return { slot, codes };
}

const showParked = (p: ParkedCall) => ({ ...p, parker: p.parker ?? null });

export const routes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/pbx_settings',
    tag: 'PBX',
    summary: "The customer's feature codes and park settings (extension)",
    permission: 'agent',
    response: settingsSchema,
    handler: async ({ ctx, auth }) => pbxSettingsRepo(ctx.db).get(auth.customerId),
  }),
  defineRoute({
    method: 'put',
    path: '/pbx_settings',
    tag: 'PBX',
    summary: "Change the customer's feature codes and park settings (extension)",
    description: 'Omitted fields stay unchanged. Two features on one code, a code inside the slot range, or more than 100 slots: 400.',
    permission: 'manager',
    body: settingsSchema.partial(),
    response: settingsSchema,
    handler: async ({ ctx, auth, body }) => {
      const repo = pbxSettingsRepo(ctx.db);
      const next: FeatureCodes = { ...(await repo.get(auth.customerId)), ...body };
      const problem = featureCodesProblem(next);
      if (problem) throw invalidArgument(problem);
      return repo.put(auth.customerId, next);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/extension_states',
    tag: 'PBX',
    summary: 'The busy-lamp state of every extension and park slot of the customer (extension)',
    description:
      'What the dialog and presence event packages show a desk phone, for all extensions at once (at most 1,000, by extension): registered or not, the lamp state and the live dialogs; and each park slot of the range, free or occupied. Changes follow on the WebSocket as `extension_state_updated` (topic resource `extension`) and `parkslot_state_updated` (topic resource `parkslot`, id the slot number).',
    permission: 'agent',
    response: z.object({ extensions: z.array(extensionStateSchema), park_slots: z.array(slotStateSchema) }),
    handler: async ({ ctx, auth }) => extensionStates(ctx).all(auth.customerId),
  }),
  defineRoute({
    method: 'get',
    path: '/parkedcalls',
    tag: 'PBX',
    summary: "The customer's parked calls, by slot (extension)",
    permission: 'agent',
    response: z.object({ result: z.array(parkedSchema) }),
    handler: async ({ ctx, auth }) => {
      await slots(ctx).sweepEnded(ctx.db, auth.customerId);
      return { result: (await slots(ctx).list(auth.customerId)).map(showParked) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/parkedcalls',
    tag: 'PBX',
    summary: 'Park a live call (extension)',
    description:
      "The call goes to `slot` (one of the customer's slots) or the first free one and hears music on hold; the party it was bridged to is released and rung back on timeout. Unknown call 404, a call not progressing or already parked 409, a slot out of range 400, taken 409, none free 409.",
    permission: 'manager',
    body: z.object({ call_id: uuid(), slot: z.number().int().optional() }),
    response: parkedSchema,
    handler: async ({ ctx, auth, body }) => {
      const codes = await pbxSettingsRepo(ctx.db).get(auth.customerId);
      if (body.slot !== undefined && !isParkSlot(codes, body.slot))
        throw invalidArgument(`slot must be one of ${codes.park_slot_first}-${codes.park_slot_last}`, [{ field: 'slot', issue: 'out of range' }]);
      const call = await progressing(ctx, auth, body.call_id);
      const bus = commandBus(ctx);
      const node = await bus.callOwner(call.id);
      if (!node) throw new ApiError('CALL_NOT_FOUND', 'the call is not live on any node');
      const table = slots(ctx);
      await table.sweepEnded(ctx.db, auth.customerId);
      if (await table.ofCall(auth.customerId, call.id)) throw new ApiError('CALL_STATE_INVALID', 'the call is parked already');
      const now = Date.now();
      const [first, last] = body.slot !== undefined ? [body.slot, body.slot] : [codes.park_slot_first, codes.park_slot_last];
      const rec = await table.claim(first, last, {
        call_id: call.id,
        customer_id: auth.customerId,
        node_id: node,
        parker: null,
        tm_parked: new Date(now).toISOString(),
        tm_timeout: new Date(now + codes.park_timeout_sec * 1000).toISOString(),
      });
      if (!rec) throw new ApiError('STATE_INVALID', body.slot !== undefined ? `slot ${body.slot} is taken` : 'every park slot is taken');
      await bus.toNode(node, { type: 'park.call', callId: call.id, customerId: auth.customerId, slot: rec.slot });
      return showParked(rec);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/parkedcalls/:slot',
    tag: 'PBX',
    summary: 'The call parked in a slot (extension)',
    permission: 'agent',
    params: z.object({ slot: z.string().max(10) }),
    response: parkedSchema,
    handler: async ({ ctx, auth, params }) => {
      const { slot } = await slotOf(ctx, auth.customerId, params.slot);
      const rec = await slots(ctx).get(auth.customerId, slot);
      if (!rec) throw new ApiError('RESOURCE_NOT_FOUND', `slot ${slot} is empty`);
      return showParked(rec);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/parkedcalls/:slot/retrieve',
    tag: 'PBX',
    summary: 'Ring an address and give it the call parked in the slot when it answers (extension)',
    description: '`destination` is checked as a POST /calls destination (e.g. an extension). An empty slot 404, a slot out of range 400.',
    permission: 'manager',
    params: z.object({ slot: z.string().max(10) }),
    body: z.object({ destination: z.object({ type: z.string().max(32), target: z.string().max(1024), target_name: z.string().max(255).optional() }) }),
    response: parkedSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const { slot } = await slotOf(ctx, auth.customerId, params.slot);
      const rec = await slots(ctx).get(auth.customerId, slot);
      if (!rec) throw new ApiError('RESOURCE_NOT_FOUND', `slot ${slot} is empty`);
      const [leg] = await planLegs(ctx, auth.customerId, { type: 'extension', target: 'park' }, [body.destination]);
      await commandBus(ctx).toNode(rec.node_id, { type: 'park.retrieve', customerId: auth.customerId, slot, destination: { type: leg!.destination.type, target: leg!.destination.target } });
      return showParked(rec);
    },
  }),
];
