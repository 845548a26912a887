/**
 * Contact cases (one piece of work with a remote party: opened by the case_create flow action or a
 * continue, owned by an agent, closed once) and their notes. They answer in the reference's form: an
 * unset reference is the empty UUID, an unset timestamp the RFC 3339 sentinel (null only in the table).
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatRfc3339OrSentinel as ts } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { CaseAddress, CaseNoteRow, CaseStatus, ContactCaseRow } from '../db/rows/contact-cases';
export { CASE_STATUSES, type CaseAddress, type CaseNoteRow, type CaseStatus, type ContactCaseRow } from '../db/rows/contact-cases';

export interface CaseCreate {
  customer_id: string;
  reference_type: string;
  reference_id: string;
  activeflow_id?: string;
  peer?: CaseAddress;
  local?: CaseAddress;
  contact_id?: string | null;
  owner_id?: string;
  name?: string;
  detail?: string;
  previous_case_id?: string | null;
}

export interface CaseFilter {
  status?: CaseStatus;
  reference_id?: string;
  owner_type?: string;
  owner_id?: string;
  contact_id?: string;
  /** Open cases without an owner. */
  unresolved?: boolean;
}

export function contactCaseJson(c: ContactCaseRow) {
  return {
    id: c.id,
    customer_id: c.customer_id,
    peer: c.peer ?? {},
    local: c.local ?? {},
    reference_type: c.reference_type,
    reference_id: c.reference_id,
    activeflow_id: c.activeflow_id,
    contact_id: c.contact_id ?? EMPTY_UUID,
    owner_type: c.owner_type,
    owner_id: c.owner_id,
    status: c.status,
    opened_at: ts(c.opened_at),
    closed_at: ts(c.closed_at),
    closed_reason: c.closed_reason,
    closed_by_type: c.closed_by_type,
    closed_by_id: c.closed_by_id ?? EMPTY_UUID,
    name: c.name,
    detail: c.detail,
    previous_case_id: c.previous_case_id ?? EMPTY_UUID,
    tm_create: ts(c.tm_create),
    tm_update: ts(c.tm_update),
  };
}

export function caseNoteJson(n: CaseNoteRow) {
  return {
    id: n.id,
    customer_id: n.customer_id,
    case_id: n.case_id,
    author_type: n.author_type,
    author_id: n.author_id ?? EMPTY_UUID,
    text: n.text,
    tm_create: ts(n.tm_create),
    tm_update: ts(n.tm_update),
    tm_delete: ts(n.tm_delete),
  };
}

export function contactCasesRepo(db: Db) {
  const cases = () => db('contact_cases');
  const notes = () => db('contact_case_notes');
  return {
    async create(input: CaseCreate): Promise<ContactCaseRow> {
      const now = clock.now();
      const owner = input.owner_id && input.owner_id !== EMPTY_UUID ? input.owner_id : EMPTY_UUID;
      const [row] = await cases()
        .insert({
          id: newId(),
          customer_id: input.customer_id,
          peer: JSON.stringify(input.peer ?? {}),
          local: JSON.stringify(input.local ?? {}),
          reference_type: input.reference_type,
          reference_id: input.reference_id,
          activeflow_id: input.activeflow_id ?? EMPTY_UUID,
          contact_id: input.contact_id ?? null,
          owner_type: owner === EMPTY_UUID ? '' : 'agent',
          owner_id: owner,
          status: 'open',
          opened_at: now,
          name: input.name ?? '',
          detail: input.detail ?? '',
          previous_case_id: input.previous_case_id ?? null,
          tm_create: now,
          tm_update: now,
        })
        .returning('*');
      return row as ContactCaseRow;
    },
    async get(customerId: string, id: string): Promise<ContactCaseRow | null> {
      const row = await cases().where({ id, customer_id: customerId }).whereNull('tm_delete').first();
      return (row as ContactCaseRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams, f: CaseFilter = {}): Promise<Page<ContactCaseRow>> {
      const q = cases().where({ customer_id: customerId }).whereNull('tm_delete').select('*');
      if (f.status) q.where({ status: f.status });
      if (f.reference_id) q.where({ reference_id: f.reference_id });
      if (f.owner_type !== undefined) q.where({ owner_type: f.owner_type });
      if (f.owner_id) q.where({ owner_id: f.owner_id });
      if (f.contact_id === EMPTY_UUID) q.whereNull('contact_id');
      else if (f.contact_id) q.where({ contact_id: f.contact_id });
      if (f.unresolved) q.where({ status: 'open', owner_id: EMPTY_UUID });
      return toPage(await paginate<ContactCaseRow>(q, params), (r) => r);
    },
    async update(id: string, patch: Partial<Pick<ContactCaseRow, 'contact_id' | 'owner_type' | 'owner_id'>>): Promise<ContactCaseRow | null> {
      const [row] = await cases()
        .where({ id })
        .whereNull('tm_delete')
        .update({ ...patch, tm_update: clock.now() })
        .returning('*');
      return (row as ContactCaseRow | undefined) ?? null;
    },
    /** Closes an open case; null when it is not open (already closed or gone). */
    async close(id: string, by: { type: string; id: string | null; reason: string }): Promise<ContactCaseRow | null> {
      const now = clock.now();
      const [row] = await cases()
        .where({ id, status: 'open' })
        .whereNull('tm_delete')
        .update({ status: 'closed', closed_at: now, closed_reason: by.reason, closed_by_type: by.type, closed_by_id: by.id, tm_update: now })
        .returning('*');
      return (row as ContactCaseRow | undefined) ?? null;
    },
    async addNote(c: ContactCaseRow, author: { type: 'agent' | 'system'; id: string | null }, text: string): Promise<CaseNoteRow> {
      const now = clock.now();
      const [row] = await notes()
        .insert({ id: newId(), customer_id: c.customer_id, case_id: c.id, author_type: author.type, author_id: author.id, text, tm_create: now, tm_update: now })
        .returning('*');
      return row as CaseNoteRow;
    },
    async listNotes(caseId: string, params: PageParams): Promise<Page<CaseNoteRow>> {
      const q = notes().where({ case_id: caseId }).whereNull('tm_delete').select('*');
      return toPage(await paginate<CaseNoteRow>(q, params), (r) => r);
    },
    async getNote(caseId: string, noteId: string): Promise<CaseNoteRow | null> {
      const row = await notes().where({ case_id: caseId, id: noteId }).whereNull('tm_delete').first();
      return (row as CaseNoteRow | undefined) ?? null;
    },
    async deleteNote(caseId: string, noteId: string): Promise<CaseNoteRow | null> {
      const now = clock.now();
      const [row] = await notes().where({ case_id: caseId, id: noteId }).whereNull('tm_delete').update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as CaseNoteRow | undefined) ?? null;
    },
  };
}
export type ContactCasesRepo = ReturnType<typeof contactCasesRepo>;
