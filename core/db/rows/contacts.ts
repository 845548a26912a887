/** Row types of core/repos/contacts.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export const CONTACT_FIELDS = ['first_name', 'last_name', 'display_name', 'company', 'job_title', 'source', 'external_id', 'notes'] as const;

export interface ContactRow extends Record<(typeof CONTACT_FIELDS)[number], string> {
  id: string;
  customer_id: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}

export interface ContactAddressRow {
  id: string;
  /** Insertion order among addresses created in the same instant (the list's tie-break). */
  seq: number;
  customer_id: string;
  contact_id: string;
  type: 'tel' | 'email';
  target: string;
  target_name: string;
  name: string;
  detail: string;
  is_primary: boolean;
  tm_create: Date;
}
