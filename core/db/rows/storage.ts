/** Row types of core/repos/storage.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export interface StorageAccountRow {
  id: string;
  customer_id: string;
  quota_bytes: number;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}

export interface StorageFileRow {
  id: string;
  customer_id: string;
  account_id: string;
  owner_id: string;
  owner_type: string;
  reference_type: string;
  reference_id: string;
  type: string;
  name: string;
  detail: string;
  filename: string;
  content_type: string;
  object_key: string;
  filesize: number;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
