/** Row types of core/repos/contact-cases.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { Address } from '../../address';

export const CASE_STATUSES = ['open', 'closed'] as const;

export type CaseStatus = (typeof CASE_STATUSES)[number];

/** The spec's Address (core/address.ts), under the name this repository exported. */
export type CaseAddress = Address;

export interface ContactCaseRow {
  id: string;
  customer_id: string;
  peer: CaseAddress | Record<string, never>;
  local: CaseAddress | Record<string, never>;
  reference_type: string;
  reference_id: string;
  activeflow_id: string;
  contact_id: string | null;
  owner_type: string;
  owner_id: string;
  status: CaseStatus;
  opened_at: Date | null;
  closed_at: Date | null;
  closed_reason: string;
  closed_by_type: string;
  closed_by_id: string | null;
  name: string;
  detail: string;
  previous_case_id: string | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}

export interface CaseNoteRow {
  id: string;
  customer_id: string;
  case_id: string;
  author_type: 'agent' | 'system';
  author_id: string | null;
  text: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
