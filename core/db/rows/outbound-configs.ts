/** Row types of core/repos/outbound-configs.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export interface OutboundConfigRow {
  id: string;
  customer_id: string;
  name: string;
  detail: string;
  destination_whitelist: string[];
  codecs: string;
  default_outgoing_source_number_id: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
