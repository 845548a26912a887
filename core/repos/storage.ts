/** storage_accounts (one per customer, created on first use, with a quota) and storage_files. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId, EMPTY_UUID } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { StorageAccountRow, StorageFileRow } from '../db/rows/storage';
export type { StorageAccountRow, StorageFileRow } from '../db/rows/storage';

export const DEFAULT_QUOTA_BYTES = 100 * 1024 * 1024;

export function storageFileJson(f: StorageFileRow, download: { uri: string; expires: Date } | null) {
  return {
    id: f.id,
    customer_id: f.customer_id,
    owner_type: f.owner_type,
    owner_id: f.owner_id,
    reference_type: f.reference_type,
    reference_id: f.reference_id,
    type: f.type,
    name: f.name,
    detail: f.detail,
    filename: f.filename,
    filesize: f.filesize,
    uri_download: download?.uri ?? '',
    tm_download_expire: formatLegacy(download?.expires ?? null),
    tm_create: formatLegacy(f.tm_create),
    tm_update: formatLegacy(f.tm_update),
    tm_delete: formatLegacy(f.tm_delete),
  };
}

export function storageRepo(db: Db) {
  const files = () => db('storage_files').whereNull('tm_delete');
  const repo = {
    /** The customer's account, made on first use; one deleted (DELETE /storage_accounts/{id}) comes back empty. */
    async account(customerId: string): Promise<StorageAccountRow> {
      await db('storage_accounts').insert({ id: newId(), customer_id: customerId, quota_bytes: DEFAULT_QUOTA_BYTES, tm_create: clock.now() }).onConflict('customer_id').ignore();
      const row = (await db('storage_accounts').where({ customer_id: customerId }).first()) as StorageAccountRow;
      if (!row.tm_delete) return row;
      const [revived] = await db('storage_accounts').where({ id: row.id }).update({ tm_delete: null, tm_update: clock.now() }).returning('*');
      return revived as StorageAccountRow;
    },
    /** The customer's live account when it exists (no creation). */
    async findAccount(customerId: string): Promise<StorageAccountRow | null> {
      return ((await db('storage_accounts').where({ customer_id: customerId }).whereNull('tm_delete').first()) as StorageAccountRow | undefined) ?? null;
    },
    async accountById(id: string): Promise<StorageAccountRow | null> {
      return ((await db('storage_accounts').where({ id }).whereNull('tm_delete').first()) as StorageAccountRow | undefined) ?? null;
    },
    async listAccounts(params: PageParams): Promise<Page<StorageAccountRow>> {
      return toPage(await paginate<StorageAccountRow>(db('storage_accounts').whereNull('tm_delete').select('*'), params), (r) => r);
    },
    /** The customer's live files, every one (an account's deletion removes their objects). */
    async allFiles(customerId: string): Promise<StorageFileRow[]> {
      return (await files().where({ customer_id: customerId }).select('*')) as StorageFileRow[];
    },
    /** Soft-deletes a live account; its live files must be gone first. The deleted row, or null. */
    async softDeleteAccount(id: string): Promise<StorageAccountRow | null> {
      const now = clock.now();
      const [row] = await db('storage_accounts').where({ id }).whereNull('tm_delete').update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as StorageAccountRow | undefined) ?? null;
    },
    async usage(customerId: string): Promise<{ total_file_count: number; total_file_size: number }> {
      const r = (await files().where({ customer_id: customerId }).count({ n: '*' }).sum({ s: 'filesize' }).first()) as { n: string | number; s: string | number | null };
      return { total_file_count: Number(r.n), total_file_size: Number(r.s ?? 0) };
    },
    /** Inserts the file row unless it would pass the quota (checked under a lock on the account row). */
    async addWithinQuota(
      customerId: string,
      input: Pick<StorageFileRow, 'name' | 'detail' | 'filename' | 'content_type' | 'filesize'> & { id: string; object_key: string; type?: string; owner_type?: string; owner_id?: string },
    ): Promise<StorageFileRow | { quota_bytes: number; used_bytes: number }> {
      const acct = await repo.account(customerId);
      return db.transaction(async (trx) => {
        await trx('storage_accounts').where({ id: acct.id }).forUpdate().first();
        const used = await storageRepo(trx).usage(customerId);
        if (used.total_file_size + input.filesize > Number(acct.quota_bytes)) return { quota_bytes: Number(acct.quota_bytes), used_bytes: used.total_file_size };
        const [row] = await trx('storage_files')
          .insert({ owner_id: EMPTY_UUID, ...input, customer_id: customerId, account_id: acct.id, reference_id: EMPTY_UUID, tm_create: clock.now() })
          .returning('*');
        return row as StorageFileRow;
      });
    },
    async get(customerId: string, id: string): Promise<StorageFileRow | null> {
      return ((await files().where({ id, customer_id: customerId }).first()) as StorageFileRow | undefined) ?? null;
    },
    async getById(id: string): Promise<StorageFileRow | null> {
      return ((await files().where({ id }).first()) as StorageFileRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<StorageFileRow>> {
      return toPage(await paginate<StorageFileRow>(files().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    async softDelete(customerId: string, id: string): Promise<StorageFileRow | null> {
      const now = clock.now();
      const [row] = await files().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as StorageFileRow | undefined) ?? null;
    },
  };
  return repo;
}
