// The two clock-driven transitions of the customer account state table:
//   initial --(no verification within 72 h)--> expired
//   frozen  --(30-day grace ends)-----------> deleted (cascade)
// `runLifecyclePass` does one pass synchronously; the BullMQ scheduler (scheduler.ts) calls it repeatedly.
import type { Knex } from 'knex';
import { clock } from '../../core/clock';
import { customerLifecycleRepo } from '../../core/repos/customer-lifecycle';
import { deleteCustomerAccount } from './account-deletion';

export const UNVERIFIED_WINDOW_MS = 72 * 3600_000;
export const FROZEN_GRACE_MS = 30 * 24 * 3600_000;

/** Moves unverified accounts older than 72 h from initial to expired; returns their ids. */
export async function expireUnverifiedAccounts(db: Knex, scope?: readonly string[]): Promise<string[]> {
  const now = clock.now();
  return customerLifecycleRepo(db).expireUnverified(now, new Date(now.getTime() - UNVERIFIED_WINDOW_MS), scope);
}

/** Deletes (cascading) frozen accounts whose grace period is over; returns their ids. */
export async function deleteFrozenAccounts(db: Knex, scope?: readonly string[], batch = 100): Promise<string[]> {
  const cutoff = new Date(clock.nowMs() - FROZEN_GRACE_MS);
  const due = await customerLifecycleRepo(db).frozenDue(cutoff, batch, scope);
  const deleted: string[] = [];
  for (const id of due) {
    if (await deleteCustomerAccount(db, id, { frozenSince: cutoff })) deleted.push(id);
  }
  return deleted;
}

export interface LifecyclePassResult {
  expired: string[];
  deleted: string[];
}

/**
 * One pass over all accounts. `scope` limits it to some customer ids: tests that move the clock
 * days ahead use it so as not to touch accounts of other suites sharing the database.
 */
export async function runLifecyclePass(db: Knex, scope?: readonly string[]): Promise<LifecyclePassResult> {
  const expired = await expireUnverifiedAccounts(db, scope);
  const deleted = await deleteFrozenAccounts(db, scope);
  return { expired, deleted };
}
