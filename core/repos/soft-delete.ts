/**
 * Soft deletion as every customer-owned table does it: the row stays, tm_delete (and tm_update)
 * get the time, and a row already deleted is left alone (nor read by getLiveRow). Scoped to a
 * customer when one is given, so another customer's id matches nothing.
 */
import type { Knex } from 'knex';
import { clock } from '../clock';

/** The live (not deleted) row `id`, of the customer when one is given. */
function liveById(table: Knex.QueryBuilder, id: string, opts: { customerId?: string }): Knex.QueryBuilder {
  const q = table.where({ id }).whereNull('tm_delete');
  if (opts.customerId) q.where({ customer_id: opts.customerId });
  return q;
}

/** One live row; null when there is none (unknown, deleted or another customer's). */
export async function getLiveRow<Row>(table: Knex.QueryBuilder, id: string, opts: { customerId?: string } = {}): Promise<Row | null> {
  return ((await liveById(table, id, opts).first()) as Row | undefined) ?? null;
}

/** Marks one live row deleted; null when there is none (unknown, already deleted or another customer's). */
export async function softDeleteRow<Row>(table: Knex.QueryBuilder, id: string, opts: { customerId?: string } = {}): Promise<Row | null> {
  const now = clock.now();
  const [row] = await liveById(table, id, opts).update({ tm_delete: now, tm_update: now }).returning('*');
  return (row as Row | undefined) ?? null;
}

/** Marks every live row of a customer deleted (account deletion cascade); returns how many. */
export async function softDeleteAllOf(table: Knex.QueryBuilder, customerId: string): Promise<number> {
  const now = clock.now();
  return table.where({ customer_id: customerId }).whereNull('tm_delete').update({ tm_delete: now, tm_update: now });
}
