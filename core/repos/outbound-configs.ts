/** outbound_configs: timestamps as RFC 3339 or null (spec: Signup accesskey response and OutboundConfig). */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { getLiveRow, softDeleteAllOf, softDeleteRow } from './soft-delete';
import { EMPTY_UUID, newId } from '../ids';
import { formatRfc3339 } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { OutboundConfigRow } from '../db/rows/outbound-configs';
export type { OutboundConfigRow } from '../db/rows/outbound-configs';

export interface OutboundConfigFields {
  name?: string;
  detail?: string;
  destination_whitelist?: string[];
  codecs?: string;
  default_outgoing_source_number_id?: string;
}

export function outboundConfigJson(o: OutboundConfigRow) {
  return {
    id: o.id,
    customer_id: o.customer_id,
    name: o.name,
    detail: o.detail,
    destination_whitelist: o.destination_whitelist ?? [],
    codecs: o.codecs,
    default_outgoing_source_number_id: o.default_outgoing_source_number_id,
    tm_create: formatRfc3339(o.tm_create),
    tm_update: formatRfc3339(o.tm_update),
    tm_delete: formatRfc3339(o.tm_delete),
  };
}

export function outboundConfigsRepo(db: Db) {
  const table = () => db('outbound_configs');
  return {
    /** Signup passes only customer_id: an empty config (whitelist [] denies all PSTN calls). */
    async create(input: OutboundConfigFields & { id?: string; customer_id: string }): Promise<OutboundConfigRow> {
      const [row] = await table()
        .insert({
          id: input.id ?? newId(),
          customer_id: input.customer_id,
          name: input.name ?? '',
          detail: input.detail ?? '',
          destination_whitelist: JSON.stringify(input.destination_whitelist ?? []),
          codecs: input.codecs ?? '',
          default_outgoing_source_number_id: input.default_outgoing_source_number_id ?? EMPTY_UUID,
          tm_create: clock.now(),
        })
        .returning('*');
      return row as OutboundConfigRow;
    },
    get(id: string, opts: { customerId?: string } = {}): Promise<OutboundConfigRow | null> {
      return getLiveRow<OutboundConfigRow>(table(), id, opts);
    },
    /** The customer's oldest live config (the one outbound dialling uses). */
    async getForCustomer(customerId: string): Promise<OutboundConfigRow | null> {
      const row = await table()
        .where({ customer_id: customerId })
        .whereNull('tm_delete')
        .orderBy([{ column: 'tm_create' }, { column: 'id' }])
        .first();
      return (row as OutboundConfigRow | undefined) ?? null;
    },
    async listByCustomer(customerId: string, params: PageParams): Promise<Page<OutboundConfigRow>> {
      const q = table().where({ customer_id: customerId }).whereNull('tm_delete').select('*');
      return toPage(await paginate<OutboundConfigRow>(q, params), (r) => r);
    },
    async update(id: string, patch: OutboundConfigFields, opts: { customerId?: string } = {}): Promise<OutboundConfigRow | null> {
      const values: Record<string, unknown> = { ...patch, tm_update: clock.now() };
      if (patch.destination_whitelist) values.destination_whitelist = JSON.stringify(patch.destination_whitelist);
      const q = table().where({ id }).whereNull('tm_delete');
      if (opts.customerId) q.where({ customer_id: opts.customerId });
      const [row] = await q.update(values).returning('*');
      return (row as OutboundConfigRow | undefined) ?? null;
    },
    softDelete: (id: string, opts: { customerId?: string } = {}) => softDeleteRow<OutboundConfigRow>(table(), id, opts),
    softDeleteByCustomer: (customerId: string) => softDeleteAllOf(table(), customerId),
  };
}
export type OutboundConfigsRepo = ReturnType<typeof outboundConfigsRepo>;
