/** Row types of core/workspace/contact-addresses.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { ContactAddressRow } from './contacts';

/** A row of contact_addresses as the contacts repo knows it, except that it may have no contact (unresolved). */
export type AddressRow = Omit<ContactAddressRow, 'contact_id'> & { contact_id: string | null };
