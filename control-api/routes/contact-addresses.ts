/**
 * Contact addresses: the addresses of the customer's contacts and the unresolved pool (addresses
 * with no contact yet, see core/workspace/contact-addresses.ts), and claim, which attaches an
 * unresolved address to a contact. One set of routes serves two doors: /contact_addresses for the
 * customer's users and access keys, and /service_agents/contact_addresses for agents (contacts are
 * shared by the customer's agents, so an agent reaches every address of its customer). Another
 * customer's address answers 404 through either.
 */
import { z } from 'zod';
import { defineRoute, idParams, text, uuid, type AnyRoute } from '../route';
import { ApiError, invalidArgument, notFound } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { addressJson, contactAddressesRepo } from '../../core/workspace/contact-addresses';
import { addressBody, addressSchema, normalizeTel } from './contacts';
import { agentScope, pageQuery, serviceAgentRoutes } from '../service-agents/scope';
import type { AuthContext } from '../context';

const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{1,63}$/;

/** tel targets are stored in E.164, emails as given. */
function checkedTarget(type: 'tel' | 'email', target: string): string {
  if (type === 'tel') {
    const tel = normalizeTel(target);
    if (!tel) throw invalidArgument('target: not an E.164 phone number', [{ field: 'target', issue: 'not E.164' }]);
    return tel;
  }
  if (!EMAIL_RE.test(target)) throw invalidArgument('target: not an email address', [{ field: 'target', issue: 'not an email address' }]);
  return target;
}

const missing = () => notFound('RESOURCE_NOT_FOUND', 'contact address not found');
const noContact = (field: string) => invalidArgument(`${field}: no such contact`, [{ field, issue: 'not a contact of this customer' }]);
interface Door {
  base: string;
  tag: string;
  /** Names this door in summaries ("" for the customer's own). */
  who: string;
  customerOf: (auth: AuthContext) => string;
}

function addressRoutes({ base, tag, who, customerOf }: Door): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: base,
      tag,
      summary: `List contact addresses${who}`,
      description: 'unresolved=true lists the addresses not attached to any contact (and ignores contact_id).',
      permission: 'agent',
      paginated: true,
      query: z.object({
        contact_id: uuid().optional(),
        type: z.enum(['tel', 'email']).optional(),
        unresolved: z.enum(['true', 'false']).optional(),
        target: z.string().min(1).max(320).optional(),
        ...pageQuery,
      }),
      response: z.object({ result: z.array(addressSchema), next_page_token: z.string() }),
      handler: async ({ ctx, auth, query, page }) => {
        const customerId = customerOf(auth);
        return contactAddressesRepo(ctx.db).list(customerId, { contact_id: query.contact_id?.toLowerCase(), type: query.type, unresolved: query.unresolved === 'true', target: query.target }, page);
      },
    }),
    defineRoute({
      method: 'post',
      path: base,
      tag,
      summary: `Create a contact address${who}`,
      description: 'Without contact_id (or with the empty UUID) the address is created unresolved.',
      permission: 'agent',
      status: 201,
      body: z.object({ contact_id: uuid().optional(), ...addressBody.shape }),
      response: addressSchema,
      handler: async ({ ctx, auth, body }) => {
        const customerId = customerOf(auth);
        const contactId = body.contact_id && body.contact_id !== EMPTY_UUID ? body.contact_id.toLowerCase() : null;
        const a = await contactAddressesRepo(ctx.db).create(customerId, { ...body, contact_id: contactId, target: checkedTarget(body.type, body.target) });
        if (!a) throw noContact('contact_id');
        return addressJson(a);
      },
    }),
    defineRoute({
      method: 'get',
      path: `${base}/:id`,
      tag,
      summary: `Get a contact address${who}`,
      permission: 'agent',
      params: idParams,
      response: addressSchema,
      handler: async ({ ctx, auth, params }) => {
        const a = await contactAddressesRepo(ctx.db).get(customerOf(auth), params.id.toLowerCase());
        if (!a) throw missing();
        return addressJson(a);
      },
    }),
    defineRoute({
      method: 'put',
      path: `${base}/:id`,
      tag,
      summary: `Update a contact address${who}`,
      permission: 'agent',
      params: idParams,
      body: z.object({ target: z.string().min(1).max(320).optional(), target_name: text().optional(), name: text().optional(), detail: text(1024).optional(), is_primary: z.boolean().optional() }),
      response: addressSchema,
      handler: async ({ ctx, auth, params, body }) => {
        const customerId = customerOf(auth);
        const repo = contactAddressesRepo(ctx.db);
        const cur = await repo.get(customerId, params.id.toLowerCase());
        if (!cur) throw missing();
        const patch = { ...body, ...(body.target !== undefined ? { target: checkedTarget(cur.type, body.target) } : {}) };
        const a = await repo.update(customerId, cur.id, patch);
        if (!a) throw missing();
        return addressJson(a);
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${base}/:id`,
      tag,
      summary: `Delete a contact address${who}`,
      permission: 'agent',
      params: idParams,
      response: addressSchema,
      handler: async ({ ctx, auth, params }) => {
        const a = await contactAddressesRepo(ctx.db).remove(customerOf(auth), params.id.toLowerCase());
        if (!a) throw missing();
        return addressJson(a);
      },
    }),
    defineRoute({
      method: 'post',
      path: `${base}/:id/claim`,
      tag,
      summary: `Claim an unresolved contact address${who}`,
      description: 'Idempotent when the address already belongs to this contact; 409 ALREADY_EXISTS when it belongs to another live contact, unless force is true (then it moves).',
      permission: 'agent',
      params: idParams,
      body: z.object({ contact_id: uuid(), force: z.boolean().optional() }),
      response: addressSchema,
      handler: async ({ ctx, auth, params, body }) => {
        const customerId = customerOf(auth);
        const repo = contactAddressesRepo(ctx.db);
        const contactId = body.contact_id.toLowerCase();
        // The address first: another customer's address is 404 whatever the body says.
        if (!(await repo.get(customerId, params.id.toLowerCase()))) throw missing();
        if (!(await repo.liveContact(customerId, contactId))) throw noContact('contact_id');
        const r = await repo.claim(customerId, params.id.toLowerCase(), contactId, body.force === true);
        if (!r) throw missing();
        if ('conflict' in r) throw new ApiError('ALREADY_EXISTS', 'the address belongs to another contact', { details: [{ field: 'contact_id', issue: `claimed by ${r.conflict.contact_id}` }] });
        return addressJson(r.ok);
      },
    }),
  ];
}

export const routes = [
  ...addressRoutes({ base: '/contact_addresses', tag: 'Contact', who: '', customerOf: (auth) => auth.customerId }),
  ...serviceAgentRoutes(addressRoutes({ base: '/service_agents/contact_addresses', tag: 'Service Agent', who: ' (service agent)', customerOf: (auth) => agentScope(auth).customerId })),
];
