/** Row types of core/repos/tags.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export interface TagRow {
  id: string;
  customer_id: string;
  name: string;
  detail: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
