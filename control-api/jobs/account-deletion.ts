// Deleting an account (spec: frozen -> deleted, "cascade deletion; unrecoverable"). Every row of every table
// that has a customer_id column is removed, so resources added by later parts are covered without
// registering anything; the customers row itself stays, anonymised, with status deleted, so the id never
// comes back to life and old credentials meet ACCOUNT_DELETED rather than a stranger's account.
import { EventEmitter } from 'node:events';
import type { Knex } from 'knex';
import { clock } from '../../core/clock';
import { customerErasureRepo } from '../../core/repos/customer-lifecycle';
import { evalAudioRepo } from '../../core/repos/eval-audio';

/** Emits 'customer_deleted' (customerId) after the deletion committed: hook for files, Redis state, calls. */
export const accountEvents = new EventEmitter();

/** Tables whose customer_id rows must survive a deletion (audit trails...). Later parts may add names. */
export const CASCADE_EXCLUDED_TABLES = new Set<string>(['customers']);

/**
 * Deletes the customer's records and marks the customer deleted, in one transaction. Tables are retried
 * pass after pass when a foreign key (RESTRICT) still points at them, until all are empty or no pass helps.
 * Returns false when the customer does not exist, is already deleted, or (with frozenSince) is no longer due.
 */
export async function deleteCustomerAccount(db: Knex, customerId: string, opts: { frozenSince?: Date } = {}): Promise<boolean> {
  const done = await db.transaction(async (trx) => {
    const erasure = customerErasureRepo(trx);
    const cu = await erasure.lock(customerId);
    if (!cu || cu.status === 'deleted') return false;
    // The grace-period job passes its cutoff: checked under the row lock, so a recovery racing it wins.
    if (opts.frozenSince && !(cu.status === 'frozen' && cu.tm_deletion_scheduled && cu.tm_deletion_scheduled <= opts.frozenSince)) return false;
    // objects in the files store named by rows about to go: queued first (eval_audio_deletions has no
    // customer_id), the eval audio sweep deletes them (core/evals/audio-removal.ts)
    await evalAudioRepo(trx).queueCustomer(trx, customerId);
    let pending = await erasure.tablesWithCustomerRows(CASCADE_EXCLUDED_TABLES);
    while (pending.length > 0) {
      const blocked: string[] = [];
      for (const table of pending) {
        try {
          await erasure.deleteRows(table, customerId);
        } catch (e) {
          if ((e as { code?: string }).code !== '23503') throw e; // only foreign-key order problems are retried
          blocked.push(table);
        }
      }
      if (blocked.length === pending.length) throw new Error(`cannot delete customer rows, foreign keys block: ${blocked.join(', ')}`);
      pending = blocked;
    }
    await erasure.anonymise(customerId, clock.now());
    return true;
  });
  if (done) accountEvents.emit('customer_deleted', customerId);
  return done;
}
