/**
 * /outplans: how campaigns dial. dial_timeout and try_interval are milliseconds (VoIPbin's model);
 * max_try_count_N caps the tries of a target's destination_N. An outplan used by a campaign that is
 * not stopped cannot be deleted (409).
 */
import { z } from 'zod';
import { defineRoute, idParams, orMissing, text } from '../route';
import { notFound, stateInvalid } from '../../core/errors';
import { outplanJson, outplansRepo } from '../../core/repos/outplans';
import { campaignsRepo } from '../../core/repos/campaigns';
import { listOf } from './schemas';
import { dialWindow, outplanSchema, sourceAddress, stripUndefined, timeZone } from '../campaigns/schemas';

const tag = 'Outplan';
const missing = () => notFound('RESOURCE_NOT_FOUND', 'outplan not found');

const dialTimeout = z.number().int().min(1000).max(600_000).describe('milliseconds, 1000-600000; default 30000');
const tryInterval = z.number().int().min(0).max(86_400_000).describe('milliseconds between tries of a target, 0-86400000; default 60000');
const maxTry = z.number().int().min(0).max(100).describe('tries of destination N, 0-100; default 1');

const outcomeInterval = z.number().int().min(0).max(86_400_000).nullable().describe('milliseconds before a retry after this outcome; null = try_interval');

const dialInfo = {
  source: sourceAddress,
  dial_timeout: dialTimeout.optional(),
  try_interval: tryInterval.optional(),
  max_try_count_0: maxTry.optional(),
  max_try_count_1: maxTry.optional(),
  max_try_count_2: maxTry.optional(),
  max_try_count_3: maxTry.optional(),
  max_try_count_4: maxTry.optional(),
  timezone: timeZone.optional().describe('IANA zone of dial_windows; default UTC'),
  dial_windows: z.array(dialWindow).max(28).optional().describe('when new attempts may start; empty (default) = any time'),
  try_interval_busy: outcomeInterval.optional(),
  try_interval_noanswer: outcomeInterval.optional(),
  try_interval_failed: outcomeInterval.optional(),
  try_interval_machine: outcomeInterval.optional(),
};

const DEFAULTS = {
  dial_timeout: 30_000,
  try_interval: 60_000,
  max_try_count_0: 1,
  max_try_count_1: 1,
  max_try_count_2: 1,
  max_try_count_3: 1,
  max_try_count_4: 1,
  timezone: 'UTC',
  dial_windows: [],
  try_interval_busy: null,
  try_interval_noanswer: null,
  try_interval_failed: null,
  try_interval_machine: null,
};

export const routes = [
  defineRoute({
    method: 'post',
    path: '/outplans',
    tag,
    summary: 'Create an outplan',
    permission: 'manager',
    body: z.object({ name: text().optional(), detail: text(1024).optional(), ...dialInfo }),
    response: outplanSchema,
    handler: async ({ ctx, auth, body }) => {
      const row = await outplansRepo(ctx.db).create(auth.customerId, { ...DEFAULTS, name: '', detail: '', ...stripUndefined(body) } as never);
      return outplanJson(row);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/outplans',
    tag,
    summary: 'List outplans',
    permission: 'manager',
    paginated: true,
    response: listOf(outplanSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await outplansRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(outplanJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/outplans/:id',
    tag,
    summary: 'Get an outplan',
    permission: 'manager',
    params: idParams,
    response: outplanSchema,
    handler: async ({ ctx, auth, params }) => outplanJson(await orMissing(outplansRepo(ctx.db).get(auth.customerId, params.id), missing)),
  }),
  defineRoute({
    method: 'put',
    path: '/outplans/:id',
    tag,
    summary: 'Update name and detail',
    permission: 'manager',
    params: idParams,
    body: z.object({ name: text().optional(), detail: text(1024).optional() }),
    response: outplanSchema,
    handler: async ({ ctx, auth, params, body }) => outplanJson(await orMissing(outplansRepo(ctx.db).update(auth.customerId, params.id, stripUndefined(body)), missing)),
  }),
  defineRoute({
    method: 'put',
    path: '/outplans/:id/dial_info',
    tag,
    summary: 'Update source, timeouts, try counts, retry intervals and dialling windows (running campaigns use them from their next step)',
    permission: 'manager',
    params: idParams,
    body: z.object({ ...dialInfo, source: sourceAddress.optional() }),
    response: outplanSchema,
    handler: async ({ ctx, auth, params, body }) => outplanJson(await orMissing(outplansRepo(ctx.db).update(auth.customerId, params.id, stripUndefined(body)), missing)),
  }),
  defineRoute({
    method: 'delete',
    path: '/outplans/:id',
    tag,
    summary: 'Delete an outplan (soft)',
    permission: 'manager',
    params: idParams,
    response: outplanSchema,
    handler: async ({ ctx, auth, params }) => {
      if (!(await outplansRepo(ctx.db).get(auth.customerId, params.id))) throw missing();
      if ((await campaignsRepo(ctx.db).activeUsing(auth.customerId, 'outplan_id', params.id)) > 0) {
        throw stateInvalid('a campaign that is not stopped uses this outplan');
      }
      return outplanJson(await orMissing(outplansRepo(ctx.db).softDelete(auth.customerId, params.id), missing));
    },
  }),
];
