// Deleting an account (spec: frozen -> deleted, "cascade deletion; unrecoverable"). Every row of every table
// that has a customer_id column is removed, so resources added by later parts are covered without
// registering anything; the customers row itself stays, anonymised, with status deleted, so the id never
// comes back to life and old credentials meet ACCOUNT_DELETED rather than a stranger's account.
import { EventEmitter } from 'node:events';
import type { Knex } from 'knex';
import { clock } from '../../core/clock';

/** Emits 'customer_deleted' (customerId) after the deletion committed: hook for files, Redis state, calls. */
export const accountEvents = new EventEmitter();

/** Tables whose customer_id rows must survive a deletion (audit trails...). Later parts may add names. */
export const CASCADE_EXCLUDED_TABLES = new Set<string>(['customers']);

async function customerTables(trx: Knex.Transaction): Promise<string[]> {
  const r = await trx.raw(
    `SELECT c.table_name FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema() AND c.column_name = 'customer_id' AND t.table_type = 'BASE TABLE'
      ORDER BY c.table_name`,
  );
  return (r.rows as { table_name: string }[]).map((x) => x.table_name).filter((n) => !CASCADE_EXCLUDED_TABLES.has(n));
}

/**
 * Deletes the customer's records and marks the customer deleted, in one transaction. Tables are retried
 * pass after pass when a foreign key (RESTRICT) still points at them, until all are empty or no pass helps.
 * Returns false when the customer does not exist, is already deleted, or (with frozenSince) is no longer due.
 */
export async function deleteCustomerAccount(db: Knex, customerId: string, opts: { frozenSince?: Date } = {}): Promise<boolean> {
  const done = await db.transaction(async (trx) => {
    const cu = await trx('customers').where({ id: customerId }).forUpdate().first();
    if (!cu || cu.status === 'deleted') return false;
    // The grace-period job passes its cutoff: checked under the row lock, so a recovery racing it wins.
    if (opts.frozenSince && !(cu.status === 'frozen' && cu.tm_deletion_scheduled && cu.tm_deletion_scheduled <= opts.frozenSince)) return false;
    let pending = await customerTables(trx);
    while (pending.length > 0) {
      const blocked: string[] = [];
      for (const table of pending) {
        try {
          await trx.transaction(async (sp) => {
            await sp(table).where({ customer_id: customerId }).delete();
          });
        } catch (e) {
          if ((e as { code?: string }).code !== '23503') throw e; // only foreign-key order problems are retried
          blocked.push(table);
        }
      }
      if (blocked.length === pending.length) throw new Error(`cannot delete customer rows, foreign keys block: ${blocked.join(', ')}`);
      pending = blocked;
    }
    const now = clock.now();
    const short = customerId.slice(0, 8);
    await trx('customers')
      .where({ id: customerId })
      .update({
        status: 'deleted',
        name: `deleted_user_${short}`,
        detail: '',
        email: `deleted_${short}@removed.invalid`,
        phone_number: '',
        address: '',
        webhook_method: '',
        webhook_uri: '',
        webhook_secret: '',
        terms_agreed_ip: '',
        tm_update: now,
        tm_delete: now,
      });
    return true;
  });
  if (done) accountEvents.emit('customer_deleted', customerId);
  return done;
}
