/**
 * The customer account's clock-driven moves and its deletion (control-api/jobs/): unverified accounts
 * expire, frozen accounts past their grace are erased. Erasing removes every row of every table with a
 * customer_id column (found in the schema, so tables added later are covered) and anonymises the
 * customers row itself.
 */
import type { Db, Knex } from '../db/knex';

export interface DeletionCandidate {
  id: string;
  status: string;
  tm_deletion_scheduled: Date | null;
}

export function customerLifecycleRepo(db: Db) {
  return {
    /** initial → expired for unverified accounts created at or before `createdBy` (within `scope` when given); their ids. */
    async expireUnverified(now: Date, createdBy: Date, scope?: readonly string[]): Promise<string[]> {
      const q = db('customers');
      if (scope) q.whereIn('id', scope);
      const rows: { id: string }[] = await q
        .where({ status: 'initial', email_verified: false })
        .whereNull('tm_delete')
        .where('tm_create', '<=', createdBy)
        .update({ status: 'expired', tm_update: now }, ['id']);
      return rows.map((r) => r.id);
    },
    /** Frozen accounts scheduled for deletion at or before `cutoff`, the longest due first, at most `batch`. */
    async frozenDue(cutoff: Date, batch: number, scope?: readonly string[]): Promise<string[]> {
      const q = db('customers');
      if (scope) q.whereIn('id', scope);
      const due: { id: string }[] = await q.select('id').where({ status: 'frozen' }).where('tm_deletion_scheduled', '<=', cutoff).orderBy('tm_deletion_scheduled').limit(batch);
      return due.map((r) => r.id);
    },
  };
}

/** The erasure of one customer's records, inside the caller's transaction. */
export function customerErasureRepo(trx: Knex.Transaction) {
  return {
    /** The customers row, locked for the erasure. */
    async lock(customerId: string): Promise<DeletionCandidate | undefined> {
      return trx<DeletionCandidate>('customers').where({ id: customerId }).forUpdate().first();
    },
    /** Every base table with a customer_id column but those `excluded`, by name. */
    async tablesWithCustomerRows(excluded: ReadonlySet<string>): Promise<string[]> {
      const r = await trx.raw(
        `SELECT c.table_name FROM information_schema.columns c
           JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
          WHERE c.table_schema = current_schema() AND c.column_name = 'customer_id' AND t.table_type = 'BASE TABLE'
          ORDER BY c.table_name`,
      );
      return (r.rows as { table_name: string }[]).map((x) => x.table_name).filter((n) => !excluded.has(n));
    },
    /** Deletes the customer's rows of `table` in a savepoint (a foreign key that refuses rolls back only this table). */
    async deleteRows(table: string, customerId: string): Promise<void> {
      await trx.transaction(async (sp) => {
        await sp(table).where({ customer_id: customerId }).delete();
      });
    },
    /** The customers row stays, anonymised, with status deleted. */
    async anonymise(customerId: string, now: Date): Promise<void> {
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
    },
  };
}
