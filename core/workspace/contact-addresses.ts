/**
 * Contact addresses on their own (/contact_addresses): an address either belongs to a contact of the
 * customer or is unresolved (contact_id NULL, migration 0761), the pool of addresses seen but not yet
 * attached; `claim` attaches one to a contact. An address of a deleted contact is gone with it.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { addressJson, newAddressRow, type AddressInput } from '../repos/contacts';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { AddressRow } from '../db/rows/workspace-contact-addresses';
export type { AddressRow } from '../db/rows/workspace-contact-addresses';
/** The JSON of an address is the contacts repo's (an unresolved one has the empty UUID as contact_id). */
export { addressJson };

/** A new address: the contacts repo's address input, with its contact or null (unresolved). */
export interface AddressCreate extends AddressInput {
  contact_id: string | null;
}

export type AddressPatch = Partial<Pick<AddressRow, 'target' | 'target_name' | 'name' | 'detail' | 'is_primary'>>;

export type ClaimResult = { ok: AddressRow } | { conflict: AddressRow } | null;

export function contactAddressesRepo(db: Db) {
  /** Addresses of the customer that are unresolved or belong to one of its live contacts. */
  const visible = (customerId: string) =>
    db('contact_addresses as a')
      .where('a.customer_id', customerId)
      .where((w) => void w.whereNull('a.contact_id').orWhereExists(db('contacts as c').whereRaw('c.id = a.contact_id').whereNull('c.tm_delete')));

  const liveContact = async (customerId: string, id: string) => !!(await db('contacts').where({ id, customer_id: customerId }).whereNull('tm_delete').first('id'));
  const touch = (trx: Db, contactId: string | null) => (contactId ? trx('contacts').where({ id: contactId }).update({ tm_update: clock.now() }) : Promise.resolve(0));
  /** One primary per contact and type. */
  const clearPrimary = (trx: Db, contactId: string | null, type: AddressRow['type'], except?: string) =>
    contactId
      ? trx('contact_addresses')
          .where({ contact_id: contactId, type })
          .modify((q) => void (except && q.whereNot({ id: except })))
          .update({ is_primary: false })
      : Promise.resolve(0);

  const repo = {
    liveContact,
    async get(customerId: string, id: string): Promise<AddressRow | null> {
      return ((await visible(customerId).where('a.id', id).first('a.*')) as AddressRow | undefined) ?? null;
    },
    async list(customerId: string, f: { contact_id?: string; type?: 'tel' | 'email'; unresolved?: boolean; target?: string }, page: PageParams): Promise<Page<ReturnType<typeof addressJson>>> {
      const q = visible(customerId).select('a.*');
      // unresolved=true wins over contact_id (the reference says so).
      if (f.unresolved) q.whereNull('a.contact_id');
      else if (f.contact_id) q.where('a.contact_id', f.contact_id);
      if (f.type) q.where('a.type', f.type);
      if (f.target !== undefined) q.where('a.target', f.target);
      return toPage(await paginate<AddressRow>(q, page, 'a'), addressJson);
    },
    /** null when the named contact is not a live contact of the customer. */
    async create(customerId: string, a: AddressCreate): Promise<AddressRow | null> {
      if (a.contact_id && !(await liveContact(customerId, a.contact_id))) return null;
      const id = newId();
      await db.transaction(async (trx) => {
        if (a.is_primary) await clearPrimary(trx, a.contact_id, a.type);
        await trx('contact_addresses').insert(newAddressRow(id, customerId, a.contact_id, a));
        await touch(trx, a.contact_id);
      });
      return (await repo.get(customerId, id))!;
    },
    async update(customerId: string, id: string, patch: AddressPatch): Promise<AddressRow | null> {
      const cur = await repo.get(customerId, id);
      if (!cur) return null;
      await db.transaction(async (trx) => {
        if (patch.is_primary) await clearPrimary(trx, cur.contact_id, cur.type, id);
        const row: Record<string, unknown> = {};
        for (const k of ['target', 'target_name', 'name', 'detail', 'is_primary'] as const) if (patch[k] !== undefined) row[k] = patch[k];
        if (Object.keys(row).length) await trx('contact_addresses').where({ id }).update(row);
        await touch(trx, cur.contact_id);
      });
      return repo.get(customerId, id);
    },
    async remove(customerId: string, id: string): Promise<AddressRow | null> {
      const cur = await repo.get(customerId, id);
      if (!cur) return null;
      await db('contact_addresses').where({ id }).delete();
      await touch(db, cur.contact_id);
      return cur;
    },
    /**
     * Attach an unresolved address to a contact: idempotent for the same contact, a conflict for
     * another unless `force` (then the address moves). Race-safe: the update only takes the row
     * while it still has the owner that was read. null: no such address.
     */
    async claim(customerId: string, id: string, contactId: string, force = false): Promise<ClaimResult> {
      const cur = await repo.get(customerId, id);
      if (!cur) return null;
      if (cur.contact_id === null || (force && cur.contact_id !== contactId)) {
        await db.transaction(async (trx) => {
          const owner = trx('contact_addresses').where({ id });
          const n = await (cur.contact_id === null ? owner.whereNull('contact_id') : owner.where({ contact_id: cur.contact_id })).update({ contact_id: contactId, is_primary: false });
          if (n) await Promise.all([touch(trx, contactId), touch(trx, cur.contact_id)]);
        });
      }
      const after = await repo.get(customerId, id);
      if (!after) return null;
      return after.contact_id === contactId ? { ok: after } : { conflict: after };
    },
  };
  return repo;
}
