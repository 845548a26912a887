/** /contacts (free, synchronous): contacts with addresses and tags; lookup by E.164 phone or email; soft delete. */
import { z } from 'zod';
import { defineRoute, idParams, text, uuid } from '../route';
import { ApiError, notFound, invalidArgument } from '../../core/errors';
import { contactsRepo, contactJson, type AddressInput } from '../../core/repos/contacts';
import type { AppContext } from '../context';
import { listOf } from './schemas';

/** "+1 (555) 000-1111", "0015550001111" → "+15550001111"; null when it cannot be E.164. */
export function normalizeTel(raw: string): string | null {
  let s = raw.trim().replace(/[\s().-]/g, '');
  if (s.startsWith('00')) s = '+' + s.slice(2);
  return /^\+[1-9]\d{6,14}$/.test(s) ? s : null;
}

const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{1,63}$/;

/** An address in a request body (a contact's addresses, a contact address created alone). */
export const addressBody = z.object({
  type: z.enum(['tel', 'email']),
  target: z.string().min(1).max(320),
  target_name: text().optional(),
  name: text().optional(),
  detail: text(1024).optional(),
  is_primary: z.boolean().optional(),
});

function checkedAddress(a: z.output<typeof addressBody>, field: string): AddressInput {
  if (a.type === 'tel') {
    const tel = normalizeTel(a.target);
    if (!tel) throw invalidArgument(`${field}.target: not an E.164 phone number`, [{ field: `${field}.target`, issue: 'not E.164' }]);
    return { ...a, target: tel };
  }
  if (!EMAIL_RE.test(a.target)) throw invalidArgument(`${field}.target: not an email address`, [{ field: `${field}.target`, issue: 'not an email address' }]);
  return a;
}

const fields = {
  first_name: text().optional(),
  last_name: text().optional(),
  display_name: text().optional(),
  company: text().optional(),
  job_title: text().optional(),
  source: text(64).optional(),
  external_id: text().optional(),
  notes: text(4096).optional(),
};

async function checkTags(ctx: AppContext, customerId: string, ids: string[], field: string): Promise<void> {
  const found = await contactsRepo(ctx.db).existingTags(customerId, ids);
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length)
    throw invalidArgument(
      `${field}: unknown tag ${missing[0]}`,
      missing.map((id) => ({ field, issue: `unknown tag ${id}` })),
    );
}

/** One address of a contact, as both the contacts and the contact-addresses routes answer it. */
export const addressSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  contact_id: z.string(),
  type: z.enum(['tel', 'email']),
  target: z.string(),
  target_name: z.string(),
  name: z.string(),
  detail: z.string(),
  is_primary: z.boolean(),
  tm_create: z.string().nullable(),
});
const contactSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  display_name: z.string(),
  company: z.string(),
  job_title: z.string(),
  source: z.string(),
  external_id: z.string(),
  notes: z.string(),
  addresses: z.array(addressSchema),
  tag_ids: z.array(z.string()),
  tm_create: z.string().nullable(),
  tm_update: z.string().nullable(),
  tm_delete: z.string().nullable(),
});

const contactAddressParams = z.object({ id: uuid(), address_id: uuid() });
const contactTagParams = z.object({ id: uuid(), tag_id: uuid() });
const missing = () => notFound('RESOURCE_NOT_FOUND', 'contact not found');
const tag = 'Contact';

export const routes = [
  defineRoute({
    method: 'post',
    path: '/contacts',
    tag,
    summary: 'Create a contact',
    permission: 'agent',
    status: 201,
    body: z.object({ ...fields, addresses: z.array(addressBody).max(50).optional(), tag_ids: z.array(uuid()).max(100).optional() }),
    response: contactSchema,
    handler: async ({ ctx, auth, body }) => {
      const addresses = (body.addresses ?? []).map((a, i) => checkedAddress(a, `addresses.${i}`));
      if (body.tag_ids) await checkTags(ctx, auth.customerId, body.tag_ids, 'tag_ids');
      return contactJson(await contactsRepo(ctx.db).create(auth.customerId, { ...body, addresses }));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/contacts',
    tag,
    summary: 'List contacts',
    permission: 'agent',
    paginated: true,
    response: listOf(contactSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await contactsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(contactJson), next_page_token: p.next_page_token };
    },
  }),
  // Literal path before /contacts/:id (which would otherwise take "lookup" as an id).
  defineRoute({
    method: 'get',
    path: '/contacts/lookup',
    tag,
    summary: 'Find a contact by E.164 phone (`+` URL-encoded) or email (case-insensitive)',
    permission: 'agent',
    query: z.object({ phone: z.string().max(64).optional(), email: z.string().max(320).optional() }),
    response: contactSchema,
    handler: async ({ ctx, auth, query }) => {
      if ((query.phone === undefined) === (query.email === undefined)) {
        throw new ApiError('MISSING_REQUEST_PARAMETER', 'give exactly one of phone or email', { details: [{ field: 'phone' }, { field: 'email' }] });
      }
      let by: { type: 'tel' | 'email'; target: string };
      if (query.phone !== undefined) {
        // An unencoded "+" arrives as a space: say so rather than silently not finding.
        const tel = normalizeTel(query.phone);
        if (!tel || !query.phone.trim().startsWith('+')) {
          throw new ApiError('INVALID_REQUEST_PARAMETER', 'phone must be E.164 with the + URL-encoded as %2B', { details: [{ field: 'phone' }] });
        }
        by = { type: 'tel', target: tel };
      } else {
        if (!EMAIL_RE.test(query.email!)) throw new ApiError('INVALID_REQUEST_PARAMETER', 'email is not an email address', { details: [{ field: 'email' }] });
        by = { type: 'email', target: query.email! };
      }
      const c = await contactsRepo(ctx.db).lookup(auth.customerId, by);
      if (!c) throw missing();
      return contactJson(c);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/contacts/:id',
    tag,
    summary: 'Get a contact',
    permission: 'agent',
    params: idParams,
    response: contactSchema,
    handler: async ({ ctx, auth, params }) => {
      const c = await contactsRepo(ctx.db).get(auth.customerId, params.id);
      if (!c) throw missing();
      return contactJson(c);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/contacts/:id',
    tag,
    summary: 'Update a contact (only given fields change)',
    permission: 'agent',
    params: idParams,
    body: z.object({ ...fields, tag_ids: z.array(uuid()).max(100).optional() }),
    response: contactSchema,
    handler: async ({ ctx, auth, params, body }) => {
      if (body.tag_ids) await checkTags(ctx, auth.customerId, body.tag_ids, 'tag_ids');
      const c = await contactsRepo(ctx.db).update(auth.customerId, params.id, body);
      if (!c) throw missing();
      return contactJson(c);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/contacts/:id',
    tag,
    summary: 'Delete a contact (soft)',
    permission: 'agent',
    params: idParams,
    response: contactSchema,
    handler: async ({ ctx, auth, params }) => {
      const c = await contactsRepo(ctx.db).softDelete(auth.customerId, params.id);
      if (!c) throw missing();
      return contactJson(c);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/contacts/:id/addresses',
    tag,
    summary: 'Add an address; returns the full contact',
    permission: 'agent',
    params: idParams,
    body: addressBody,
    response: contactSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const c = await contactsRepo(ctx.db).addAddress(auth.customerId, params.id, checkedAddress(body, 'body'));
      if (!c) throw missing();
      return contactJson(c);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/contacts/:id/addresses/:address_id',
    tag,
    summary: 'Update an address; returns the contact',
    permission: 'agent',
    params: contactAddressParams,
    body: z.object({ target: z.string().min(1).max(320).optional(), target_name: text().optional(), name: text().optional(), detail: text(1024).optional(), is_primary: z.boolean().optional() }),
    response: contactSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const repo = contactsRepo(ctx.db);
      const current = await repo.get(auth.customerId, params.id);
      const addr = current?.addresses.find((a) => a.id === params.address_id);
      if (!current || !addr) throw notFound('RESOURCE_NOT_FOUND', 'contact or address not found');
      const patch = { ...body };
      if (body.target !== undefined) patch.target = checkedAddress({ type: addr.type, target: body.target }, 'body').target;
      return contactJson((await repo.updateAddress(auth.customerId, params.id, params.address_id, patch))!);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/contacts/:id/addresses/:address_id',
    tag,
    summary: 'Remove an address; returns the contact',
    permission: 'agent',
    params: contactAddressParams,
    response: contactSchema,
    handler: async ({ ctx, auth, params }) => {
      const c = await contactsRepo(ctx.db).deleteAddress(auth.customerId, params.id, params.address_id);
      if (!c) throw notFound('RESOURCE_NOT_FOUND', 'contact or address not found');
      return contactJson(c);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/contacts/:id/tags',
    tag,
    summary: 'Attach a tag; returns the contact',
    permission: 'agent',
    params: idParams,
    body: z.object({ tag_id: uuid() }),
    response: contactSchema,
    handler: async ({ ctx, auth, params, body }) => {
      await checkTags(ctx, auth.customerId, [body.tag_id], 'tag_id');
      const c = await contactsRepo(ctx.db).addTag(auth.customerId, params.id, body.tag_id);
      if (!c) throw missing();
      return contactJson(c);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/contacts/:id/tags/:tag_id',
    tag,
    summary: 'Detach a tag; returns the contact',
    permission: 'agent',
    params: contactTagParams,
    response: contactSchema,
    handler: async ({ ctx, auth, params }) => {
      const c = await contactsRepo(ctx.db).removeTag(auth.customerId, params.id, params.tag_id);
      if (!c) throw notFound('RESOURCE_NOT_FOUND', 'contact or tag link not found');
      return contactJson(c);
    },
  }),
];
