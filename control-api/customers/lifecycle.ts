/**
 * An account's freeze, recovery and deletion, shared by the auth group (POST/DELETE /auth/unregister,
 * the customer's own request) and the ProjectSuperAdmin routes (/customers/{id}/freeze, /recover,
 * DELETE /customers/{id}). Each takes the customer's row lock; after a change the caller announces it
 * with `customerChanged`: the REST status gate forgets its cached status and every control-api copy
 * rechecks the customer's open WebSockets (a frozen or deleted account's sockets close with 1008).
 */
import type { Knex } from 'knex';
import type { Request } from 'express';
import type { AppContext } from '../context';
import type { StatusGate } from '../middleware/status-gate';
import { clock } from '../../core/clock';
import { repos, type CustomerRow } from '../../core/repos';
import { sessionsRevoked } from '../middleware/session-revoke';
import { lockLiveCustomer } from '../../core/repos/customers';

/** Freezes (idempotent for a frozen account); null when the account is deleted or missing. */
export async function freezeCustomer(db: Knex, customerId: string): Promise<CustomerRow | null> {
  return db.transaction(async (trx) => {
    const cu = await lockLiveCustomer(trx, customerId);
    if (!cu || cu.status === 'deleted') return null;
    if (cu.status === 'frozen') return cu;
    // every session of the account ends: its agents log in again to recover or to delete it
    await repos(trx).agents.retireSessions({ customerId });
    return repos(trx).customers.update(customerId, { status: 'frozen', tm_deletion_scheduled: clock.now() });
  });
}

export type RecoverResult = { ok: true; customer: CustomerRow } | { ok: false; why: 'missing' | 'not-frozen' };

/** Cancels a scheduled deletion; an account frozen before it was verified goes back to initial. */
export async function recoverCustomer(db: Knex, customerId: string): Promise<RecoverResult> {
  return db.transaction(async (trx): Promise<RecoverResult> => {
    const cu = await lockLiveCustomer(trx, customerId);
    if (!cu) return { ok: false, why: 'missing' };
    if (cu.status !== 'frozen') return { ok: false, why: 'not-frozen' };
    const customer = await repos(trx).customers.update(cu.id, { status: cu.email_verified ? 'active' : 'initial', tm_deletion_scheduled: null });
    return customer ? { ok: true, customer } : { ok: false, why: 'missing' };
  });
}

/** The app's status gate (control-api/app.ts keeps it in app.locals), when the request went through one. */
export function statusGateOf(req: Request): StatusGate | undefined {
  const gate: unknown = req.app.locals.statusGate;
  return gate && typeof gate === 'object' && 'invalidate' in gate ? (gate as StatusGate) : undefined;
}

/**
 * Announces a change of the account's standing: cached status dropped, cached credentials of this
 * process dropped (a freeze ended every session), open sockets rechecked now.
 */
export async function customerChanged(ctx: AppContext, gate: StatusGate | undefined, customerId: string): Promise<void> {
  gate?.invalidate(customerId);
  await sessionsRevoked(ctx, customerId);
}
