/** /customer (the caller's own account) and /me (the calling agent). */
import { z } from 'zod';
import { defineRoute, text } from '../route';
import { directAccessNotSupported, invalidParameter, notFound } from '../../core/errors';
import { agentJson, customerJson } from '../../core/repos';
import { agentSchema, customerSchema } from './schemas';
import { assertEgressUrl } from '../egress-field';

const webhookMethod = z.enum(['', 'POST', 'GET', 'PUT', 'DELETE']);
const webhookUri = z
  .string()
  .max(2048)
  .refine((v) => {
    if (v === '') return true;
    try {
      return ['http:', 'https:'].includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, 'must be an http or https URL');

export const routes = [
  defineRoute({
    method: 'get',
    path: '/customer',
    tag: 'Customer',
    summary: 'Get the current customer',
    permission: 'agent',
    response: customerSchema,
    handler: async ({ ctx, auth }) => {
      const c = await ctx.repos.customers.get(auth.customerId);
      if (!c) throw notFound();
      return customerJson(c, { self: true });
    },
  }),
  defineRoute({
    method: 'put',
    path: '/customer',
    tag: 'Customer',
    summary: 'Update the current customer',
    description: 'Fields left out keep their value. email may be sent back unchanged (clients send the whole record); changing it goes through the auth group, not here.',
    permission: 'admin',
    body: z.strictObject({
      name: text().optional(),
      detail: text(1024).optional(),
      email: z.string().max(320).optional(),
      phone_number: z.union([z.literal(''), z.string().regex(/^\+[1-9]\d{1,14}$/, 'must be E.164 (+ and digits)')]).optional(),
      address: text(1024).optional(),
      webhook_method: webhookMethod.optional(),
      webhook_uri: webhookUri.optional(),
    }),
    response: customerSchema,
    handler: async ({ ctx, auth, body }) => {
      assertEgressUrl(ctx, 'webhook_uri', body.webhook_uri);
      const { email, ...changes } = body;
      if (email !== undefined) {
        const current = await ctx.repos.customers.get(auth.customerId);
        if (!current) throw notFound();
        if (email.toLowerCase() !== current.email.toLowerCase()) throw invalidParameter('email', 'email cannot be changed here: use the auth group');
      }
      const c = await ctx.repos.customers.update(auth.customerId, changes);
      if (!c) throw notFound();
      return customerJson(c, { self: true });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/me',
    tag: 'Me',
    summary: 'Get the logged-in agent',
    permission: 'agent',
    jwtOnly: true,
    response: agentSchema,
    handler: async ({ ctx, auth }) => {
      if (auth.kind !== 'agent' && auth.kind !== 'delegate') throw directAccessNotSupported();
      const a = await ctx.repos.agents.get(auth.agentId);
      if (!a) throw notFound();
      return agentJson(a);
    },
  }),
];
