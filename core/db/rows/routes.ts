/** Row types of core/repos/routes.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export interface RouteRow {
  id: string;
  customer_id: string;
  name: string;
  detail: string;
  provider_id: string;
  priority: number;
  target: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
