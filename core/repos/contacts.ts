/**
 * contacts with their addresses (tel targets stored in E.164) and tag links. Reads return the full
 * Contact (addresses and tag_ids); lookup matches a tel target exactly or an email case-insensitively.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatRfc3339 } from '../time';
import { paginate, type Page, type PageParams } from '../pagination';
import { CONTACT_FIELDS, type ContactAddressRow, type ContactRow } from '../db/rows/contacts';
import type { AddressRow } from '../db/rows/workspace-contact-addresses';
export { CONTACT_FIELDS, type ContactAddressRow, type ContactRow } from '../db/rows/contacts';
export type ContactFields = Partial<Record<(typeof CONTACT_FIELDS)[number], string>>;

export interface AddressInput {
  type: 'tel' | 'email';
  target: string;
  target_name?: string;
  name?: string;
  detail?: string;
  is_primary?: boolean;
}

export interface Contact extends ContactRow {
  addresses: ContactAddressRow[];
  tag_ids: string[];
}

/** The reference's ContactManagerAddress; a contact's address, or an unresolved one (core/workspace/contact-addresses.ts), which has the empty UUID as contact_id. */
export function addressJson(a: AddressRow) {
  return {
    id: a.id,
    customer_id: a.customer_id,
    contact_id: a.contact_id ?? EMPTY_UUID,
    type: a.type,
    target: a.target,
    target_name: a.target_name,
    name: a.name,
    detail: a.detail,
    is_primary: a.is_primary,
    tm_create: formatRfc3339(a.tm_create),
  };
}

/** A new contact_addresses row (of a contact, or unresolved with no contact): omitted texts empty, not primary unless asked. */
export function newAddressRow(id: string, customerId: string, contactId: string | null, a: AddressInput) {
  return {
    id,
    customer_id: customerId,
    contact_id: contactId,
    type: a.type,
    target: a.target,
    target_name: a.target_name ?? '',
    name: a.name ?? '',
    detail: a.detail ?? '',
    is_primary: a.is_primary ?? false,
    tm_create: clock.now(),
  };
}

export function contactJson(c: Contact) {
  const base: Record<string, unknown> = { id: c.id, customer_id: c.customer_id };
  for (const f of CONTACT_FIELDS) base[f] = c[f];
  return {
    ...base,
    addresses: c.addresses.map(addressJson),
    tag_ids: c.tag_ids,
    tm_create: formatRfc3339(c.tm_create),
    tm_update: formatRfc3339(c.tm_update),
    tm_delete: formatRfc3339(c.tm_delete),
  };
}

export function contactsRepo(db: Db) {
  const live = () => db('contacts').whereNull('tm_delete');

  async function expand(rows: ContactRow[]): Promise<Contact[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const addrs = (await db('contact_addresses')
      .whereIn('contact_id', ids)
      .orderBy([{ column: 'tm_create' }, { column: 'seq' }])) as ContactAddressRow[];
    const tags = (await db('contact_tags').whereIn('contact_id', ids).orderBy('tm_create')) as { contact_id: string; tag_id: string }[];
    return rows.map((r) => ({ ...r, addresses: addrs.filter((a) => a.contact_id === r.id), tag_ids: tags.filter((t) => t.contact_id === r.id).map((t) => t.tag_id) }));
  }

  async function insertAddress(trx: Db, customerId: string, contactId: string, a: AddressInput): Promise<void> {
    if (a.is_primary) await trx('contact_addresses').where({ contact_id: contactId, type: a.type }).update({ is_primary: false });
    await trx('contact_addresses').insert(newAddressRow(newId(), customerId, contactId, a));
  }

  const touch = (trx: Db, id: string) => trx('contacts').where({ id }).update({ tm_update: clock.now() });

  const repo = {
    async get(customerId: string, id: string): Promise<Contact | null> {
      const row = (await live().where({ id, customer_id: customerId }).first()) as ContactRow | undefined;
      return row ? (await expand([row]))[0]! : null;
    },
    /** Tag ids of this customer that exist (live) among `ids`. */
    async existingTags(customerId: string, ids: string[]): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = (await db('tags').whereNull('tm_delete').where({ customer_id: customerId }).whereIn('id', ids).select('id')) as { id: string }[];
      return new Set(rows.map((r) => r.id));
    },
    async create(customerId: string, input: ContactFields & { addresses?: AddressInput[]; tag_ids?: string[] }): Promise<Contact> {
      const id = newId();
      await db.transaction(async (trx) => {
        const row: Record<string, unknown> = { id, customer_id: customerId, tm_create: clock.now() };
        for (const f of CONTACT_FIELDS) if (input[f] !== undefined) row[f] = input[f];
        await trx('contacts').insert(row);
        for (const a of input.addresses ?? []) await insertAddress(trx, customerId, id, a);
        for (const tagId of new Set(input.tag_ids ?? [])) await trx('contact_tags').insert({ contact_id: id, tag_id: tagId, tm_create: clock.now() });
      });
      return (await repo.get(customerId, id))!;
    },
    async list(customerId: string, params: PageParams): Promise<Page<Contact>> {
      const p = await paginate<ContactRow>(live().where({ customer_id: customerId }).select('*'), params);
      return { result: await expand(p.rows), next_page_token: p.nextPageToken };
    },
    async update(customerId: string, id: string, patch: ContactFields & { tag_ids?: string[] }): Promise<Contact | null> {
      const found = await live().where({ id, customer_id: customerId }).first('id');
      if (!found) return null;
      await db.transaction(async (trx) => {
        const row: Record<string, unknown> = { tm_update: clock.now() };
        for (const f of CONTACT_FIELDS) if (patch[f] !== undefined) row[f] = patch[f];
        await trx('contacts').where({ id }).update(row);
        if (patch.tag_ids) {
          await trx('contact_tags').where({ contact_id: id }).delete();
          for (const tagId of new Set(patch.tag_ids)) await trx('contact_tags').insert({ contact_id: id, tag_id: tagId, tm_create: clock.now() });
        }
      });
      return repo.get(customerId, id);
    },
    async softDelete(customerId: string, id: string): Promise<Contact | null> {
      const c = await repo.get(customerId, id);
      if (!c) return null;
      const now = clock.now();
      await db('contacts').where({ id }).update({ tm_delete: now, tm_update: now });
      return { ...c, tm_delete: now, tm_update: now };
    },
    async lookup(customerId: string, by: { type: 'tel' | 'email'; target: string }): Promise<Contact | null> {
      const q = db('contacts as c').join('contact_addresses as a', 'a.contact_id', 'c.id').whereNull('c.tm_delete').where({ 'c.customer_id': customerId, 'a.type': by.type });
      if (by.type === 'email') q.whereRaw('lower(a.target) = lower(?)', [by.target]);
      else q.where('a.target', by.target);
      const row = (await q
        .orderBy([
          { column: 'a.is_primary', order: 'desc' },
          { column: 'c.tm_create', order: 'desc' },
        ])
        .first('c.*')) as ContactRow | undefined;
      return row ? (await expand([row]))[0]! : null;
    },
    async addAddress(customerId: string, contactId: string, a: AddressInput): Promise<Contact | null> {
      if (!(await repo.get(customerId, contactId))) return null;
      await db.transaction(async (trx) => {
        await insertAddress(trx, customerId, contactId, a);
        await touch(trx, contactId);
      });
      return repo.get(customerId, contactId);
    },
    /** null when the contact or the address is not found. */
    async updateAddress(customerId: string, contactId: string, addressId: string, patch: Partial<Omit<AddressInput, 'type'>>): Promise<Contact | null> {
      const c = await repo.get(customerId, contactId);
      const addr = c?.addresses.find((a) => a.id === addressId);
      if (!c || !addr) return null;
      await db.transaction(async (trx) => {
        if (patch.is_primary) await trx('contact_addresses').where({ contact_id: contactId, type: addr.type }).update({ is_primary: false });
        const row: Record<string, unknown> = {};
        for (const k of ['target', 'target_name', 'name', 'detail', 'is_primary'] as const) if (patch[k] !== undefined) row[k] = patch[k];
        if (Object.keys(row).length) await trx('contact_addresses').where({ id: addressId }).update(row);
        await touch(trx, contactId);
      });
      return repo.get(customerId, contactId);
    },
    async deleteAddress(customerId: string, contactId: string, addressId: string): Promise<Contact | null> {
      if (!(await repo.get(customerId, contactId))) return null;
      const n = await db('contact_addresses').where({ id: addressId, contact_id: contactId }).delete();
      if (n === 0) return null;
      await touch(db, contactId);
      return repo.get(customerId, contactId);
    },
    async addTag(customerId: string, contactId: string, tagId: string): Promise<Contact | null> {
      if (!(await repo.get(customerId, contactId))) return null;
      await db('contact_tags').insert({ contact_id: contactId, tag_id: tagId, tm_create: clock.now() }).onConflict(['contact_id', 'tag_id']).ignore();
      await touch(db, contactId);
      return repo.get(customerId, contactId);
    },
    async removeTag(customerId: string, contactId: string, tagId: string): Promise<Contact | null> {
      if (!(await repo.get(customerId, contactId))) return null;
      const n = await db('contact_tags').where({ contact_id: contactId, tag_id: tagId }).delete();
      if (n === 0) return null;
      await touch(db, contactId);
      return repo.get(customerId, contactId);
    },
  };
  return repo;
}

/** Whether the customer has this live contact. */
export async function liveContactExists(db: Db, customerId: string, id: string): Promise<boolean> {
  return !!(await db('contacts').where({ id, customer_id: customerId }).whereNull('tm_delete').first('id'));
}

/** Whether the customer has this contact address. */
export async function contactAddressExists(db: Db, customerId: string, id: string): Promise<boolean> {
  return !!(await db('contact_addresses').where({ id, customer_id: customerId }).first('id'));
}
