/**
 * Soft deletion as every customer-owned table does it: the row stays, tm_delete (and tm_update)
 * get the time, and a row already deleted is left alone. Scoped to a customer when one is given,
 * so another customer's id matches nothing.
 */
import type { Knex } from 'knex';
import { clock } from '../clock';

/** Marks one live row deleted; null when there is none (unknown, already deleted or another customer's). */
export async function softDeleteRow<Row>(table: Knex.QueryBuilder, id: string, opts: { customerId?: string } = {}): Promise<Row | null> {
  const now = clock.now();
  const q = table.where({ id }).whereNull('tm_delete');
  if (opts.customerId) q.where({ customer_id: opts.customerId });
  const [row] = await q.update({ tm_delete: now, tm_update: now }).returning('*');
  return (row as Row | undefined) ?? null;
}

/** Marks every live row of a customer deleted (account deletion cascade); returns how many. */
export async function softDeleteAllOf(table: Knex.QueryBuilder, customerId: string): Promise<number> {
  const now = clock.now();
  return table.where({ customer_id: customerId }).whereNull('tm_delete').update({ tm_delete: now, tm_update: now });
}
