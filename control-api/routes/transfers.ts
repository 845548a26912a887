/**
 * /transfers: blind or attended transfer of the party bridged to `transferer_call_id` to
 * `transferee_addresses` (docs/transfers.md). The row is written here (status initiating) and
 * transfer.start goes to the node owning the transferer's call, which runs it and updates the row.
 * The request's type field is `transfer_type` (VoIPbin's OpenAPI); `type` is accepted as well.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { ApiError, invalidArgument } from '../../core/errors';
import { callsRepo } from '../../core/repos/calls';
import { transferJson, transfersRepo } from '../../core/repos/transfers';
import { TRANSFER_TYPES } from '../../core/transfers/model';
import { commandBus } from '../calls/bus';
import { planLegs } from '../calls/plan';
import { addressSchema, rfc3339OrNull, uuidOut } from './schemas';

const addressIn = z.strictObject({
  type: z.string().max(32),
  target: z.string().max(1024),
  target_name: z.string().max(255).optional(),
  name: z.string().max(255).optional(),
  detail: z.string().max(1024).optional(),
});

const transferSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  type: z.enum(TRANSFER_TYPES),
  transferer_call_id: uuidOut(),
  transferee_addresses: z.array(addressSchema),
  transferee_call_id: uuidOut(),
  groupcall_id: uuidOut(),
  confbridge_id: uuidOut(),
  status: z.enum(['initiating', 'consulting', 'done', 'failed']),
  tm_create: rfc3339OrNull(),
  tm_update: rfc3339OrNull(),
  tm_delete: rfc3339OrNull(),
});

const createBody = z.object({
  transfer_type: z.enum(TRANSFER_TYPES).optional(),
  type: z.enum(TRANSFER_TYPES).optional().describe('alias of transfer_type'),
  transferer_call_id: uuid(),
  transferee_addresses: z.array(addressIn).min(1).max(10),
});

export const routes = [
  defineRoute({
    method: 'post',
    path: '/transfers',
    tag: 'Transfer',
    summary: 'Transfer the party bridged to a call (blind or attended)',
    permission: 'manager',
    body: createBody,
    response: transferSchema,
    handler: async ({ ctx, auth, body }) => {
      const type = body.transfer_type ?? body.type;
      if (!type) throw invalidArgument('transfer_type is required (attended or blind)', [{ field: 'transfer_type', issue: 'required' }]);
      const call = await callsRepo(ctx.db).getOwned(auth.customerId, body.transferer_call_id);
      if (!call) throw new ApiError('CALL_NOT_FOUND', 'transferer call not found', { details: [{ field: 'transferer_call_id' }] });
      if (call.status === 'hangup') throw new ApiError('CALL_ALREADY_HANGUP', 'the transferer call has already ended');
      if (call.status !== 'progressing') throw new ApiError('CALL_STATE_INVALID', `the transferer call is ${call.status}, not progressing`);
      const legs = await planLegs(ctx, auth.customerId, call.direction === 'incoming' ? call.destination : call.source, body.transferee_addresses);
      const bus = commandBus(ctx);
      const node = await bus.callOwner(call.id);
      if (!node) throw new ApiError('CALL_NOT_FOUND', 'the transferer call is not live on any node');
      const t = await transfersRepo(ctx.db).create({
        customer_id: auth.customerId,
        type,
        transferer_call_id: call.id,
        transferee_addresses: legs.map((l) => l.destination),
      });
      await bus.toNode(node, { type: 'transfer.start', transferId: t.id, callId: call.id });
      return transferJson(t);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/transfers/:id',
    tag: 'Transfer',
    summary: 'Get a transfer',
    permission: 'manager',
    params: idParams,
    response: transferSchema,
    handler: async ({ ctx, auth, params }) => {
      const t = await transfersRepo(ctx.db).getOwned(auth.customerId, params.id);
      if (!t) throw new ApiError('RESOURCE_NOT_FOUND', 'transfer not found');
      return transferJson(t);
    },
  }),
];
