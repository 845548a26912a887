/**
 * Contact-case operations shared by /contact_cases (managers) and /service_agents/contact_cases
 * (the agent's own and the unowned open ones): schemas, lookups and the state changes, each
 * answering the spec's errors (404 outside reach, 409 STATE_INVALID on the wrong state).
 */
import { z } from 'zod';
import type { AppContext } from '../context';
import { ApiError } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { contactsRepo } from '../../core/repos/contacts';
import { CASE_STATUSES, contactCasesRepo, type CaseAddress, type ContactCaseRow } from '../../core/repos/contact-cases';
import { uuid } from '../route';
import { uuidOut } from '../routes/schemas';

const addressOut = z.object({ type: z.string(), target: z.string() }).passthrough().or(z.object({}));
const ts = () => z.string().describe('RFC 3339; 9999-01-01T00:00:00.000000Z when unset');
const ref = () => uuidOut().describe('the empty UUID when unset');

export const caseSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  peer: addressOut,
  local: addressOut,
  reference_type: z.string(),
  reference_id: uuidOut(),
  activeflow_id: uuidOut(),
  contact_id: ref(),
  owner_type: z.enum(['', 'agent']),
  owner_id: uuidOut(),
  status: z.enum(CASE_STATUSES),
  opened_at: ts(),
  closed_at: ts(),
  closed_reason: z.string(),
  closed_by_type: z.enum(['', 'agent', 'system']),
  closed_by_id: ref(),
  name: z.string(),
  detail: z.string(),
  previous_case_id: ref(),
  tm_create: ts(),
  tm_update: ts(),
});

export const noteSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  case_id: uuidOut(),
  author_type: z.enum(['agent', 'system']),
  author_id: ref(),
  text: z.string(),
  tm_create: ts(),
  tm_update: ts(),
  tm_delete: ts(),
});

export const noteParams = z.object({ id: uuid(), note_id: uuid() });
export const contactBody = z.object({ contact_id: uuid().nullable().describe('the contact to attribute the case to; null or the empty UUID detaches') });
export const noteText = z.string().min(1).max(8192);

export const caseNotFound = () => new ApiError('RESOURCE_NOT_FOUND', 'contact case not found');

export async function findCase(ctx: AppContext, customerId: string, id: string, visible: (c: ContactCaseRow) => boolean = () => true): Promise<ContactCaseRow> {
  const c = await contactCasesRepo(ctx.db).get(customerId, id.toLowerCase());
  if (!c || !visible(c)) throw caseNotFound();
  return c;
}

export async function setContact(ctx: AppContext, c: ContactCaseRow, contactId: string | null): Promise<ContactCaseRow> {
  let value: string | null = null;
  if (contactId && contactId !== EMPTY_UUID) {
    value = contactId.toLowerCase();
    if (!(await contactsRepo(ctx.db).get(c.customer_id, value))) {
      throw new ApiError('INVALID_ARGUMENT', 'contact_id: no such contact', { details: [{ field: 'contact_id', issue: 'not a contact of this customer' }] });
    }
  }
  const u = await contactCasesRepo(ctx.db).update(c.id, { contact_id: value });
  if (!u) throw caseNotFound();
  return u;
}

export async function assignCase(ctx: AppContext, c: ContactCaseRow, ownerId: string): Promise<ContactCaseRow> {
  if (c.status !== 'open') throw new ApiError('STATE_INVALID', 'a closed case cannot be assigned');
  const owner = ownerId.toLowerCase();
  if (owner === EMPTY_UUID || !(await ctx.repos.agents.get(owner, { customerId: c.customer_id }))) {
    throw new ApiError('INVALID_ARGUMENT', 'owner_id: no such agent', { details: [{ field: 'owner_id', issue: 'not an agent of this customer' }] });
  }
  const u = await contactCasesRepo(ctx.db).update(c.id, { owner_type: 'agent', owner_id: owner });
  if (!u) throw caseNotFound();
  return u;
}

export async function closeCase(ctx: AppContext, c: ContactCaseRow, by: { type: 'agent' | 'system'; id: string | null }): Promise<ContactCaseRow> {
  if (c.status !== 'open') throw new ApiError('STATE_INVALID', 'the case is already closed');
  const u = await contactCasesRepo(ctx.db).close(c.id, { ...by, reason: by.type === 'agent' ? 'agent_closed' : 'closed' });
  if (!u) throw new ApiError('STATE_INVALID', 'the case is already closed');
  return u;
}

/** A new open case chained to a closed one (previous_case_id), same parties, reference and owner. */
export async function continueCase(ctx: AppContext, c: ContactCaseRow): Promise<ContactCaseRow> {
  if (c.status !== 'closed') throw new ApiError('STATE_INVALID', 'only a closed case can be continued');
  return contactCasesRepo(ctx.db).create({
    customer_id: c.customer_id,
    reference_type: c.reference_type,
    reference_id: c.reference_id,
    activeflow_id: c.activeflow_id,
    peer: 'type' in c.peer ? (c.peer as CaseAddress) : undefined,
    local: 'type' in c.local ? (c.local as CaseAddress) : undefined,
    contact_id: c.contact_id,
    owner_id: c.owner_id,
    name: c.name,
    detail: c.detail,
    previous_case_id: c.id,
  });
}
