/** transfers: written by control-api (API) or media-app (REFER); media-app updates them as they run. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatRfc3339 } from '../time';
import type { TransferRow } from '../db/rows/transfers';
export type { TransferRow } from '../db/rows/transfers';

export type TransferCreate = Pick<TransferRow, 'customer_id' | 'type' | 'transferer_call_id' | 'transferee_addresses'> & Partial<Pick<TransferRow, 'id' | 'source'>>;

/** The Transfer as the API shows it (the spec's fields, plus status). */
export function transferJson(t: TransferRow) {
  return {
    id: t.id,
    customer_id: t.customer_id,
    type: t.type,
    transferer_call_id: t.transferer_call_id,
    transferee_addresses: t.transferee_addresses,
    transferee_call_id: t.transferee_call_id,
    groupcall_id: t.groupcall_id,
    confbridge_id: t.confbridge_id,
    status: t.status,
    tm_create: formatRfc3339(t.tm_create),
    tm_update: formatRfc3339(t.tm_update),
    tm_delete: formatRfc3339(t.tm_delete),
  };
}

export function transfersRepo(db: Db) {
  const table = () => db('transfers');
  return {
    async create(input: TransferCreate): Promise<TransferRow> {
      const [row] = await table()
        .insert({
          id: input.id ?? newId(),
          transferee_call_id: EMPTY_UUID,
          groupcall_id: EMPTY_UUID,
          confbridge_id: EMPTY_UUID,
          status: 'initiating',
          source: 'api',
          ...input,
          transferee_addresses: JSON.stringify(input.transferee_addresses),
          tm_create: clock.now(),
        })
        .returning('*');
      return row as TransferRow;
    },
    async get(id: string): Promise<TransferRow | null> {
      return ((await table().where({ id }).first()) as TransferRow | undefined) ?? null;
    },
    async getOwned(customerId: string, id: string): Promise<TransferRow | null> {
      return ((await table().where({ id, customer_id: customerId }).whereNull('tm_delete').first()) as TransferRow | undefined) ?? null;
    },
    async update(id: string, patch: Partial<Pick<TransferRow, 'status' | 'transferee_call_id' | 'groupcall_id' | 'confbridge_id'>>): Promise<TransferRow | null> {
      const [row] = await table()
        .where({ id })
        .update({ ...patch, tm_update: clock.now() })
        .returning('*');
      return (row as TransferRow | undefined) ?? null;
    },
  };
}
