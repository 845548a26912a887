/** Row types of core/repos/accesskeys.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export interface AccesskeyRow {
  id: string;
  customer_id: string;
  name: string;
  detail: string;
  token_hash: string;
  token_prefix: string;
  tm_expire: Date;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
