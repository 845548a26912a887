// POST /auth/unregister freezes the account (30-day grace, then the lifecycle job deletes it) or, with
// immediate true, deletes it at once; DELETE /auth/unregister cancels a scheduled deletion.
// Re-authentication (voipbin): exactly one of `password` (the logged-in agent's) or
// `confirmation_phrase` "DELETE" (access keys have no password to give). Wrong ones: bare 400.
import type { Request, RequestHandler } from 'express';
import { repos, customerJson } from '../../core/repos';
import { freezeCustomer, recoverCustomer } from '../customers/lifecycle';
import { verifyPassword } from '../../core/password';
import { hasLevel } from '../../core/permissions';
import { unregisterMail } from '../../core/smtp';
import { deleteCustomerAccount } from '../jobs/account-deletion';
import { FROZEN_GRACE_MS } from '../jobs/account-lifecycle';
import { bare, isObject } from './bare';
import { CONFIRMATION_PHRASE, unregisterBody } from './schemas';
import { sendQuietly, type AuthDeps } from './deps';

/** Only the customer's own admins (login tokens, access keys) may unregister; direct and delegate tokens may not. */
function mayUnregister(req: Request): boolean {
  const a = req.auth;
  return !!a && (a.kind === 'agent' || a.kind === 'accesskey') && hasLevel(a.permission, 'admin');
}

export function postUnregister(deps: AuthDeps): RequestHandler {
  const { db, logger, config } = deps.ctx;
  return async (req, res, next) => {
    const a = req.auth;
    if (!a || !mayUnregister(req)) return bare(res, 403);
    const body = req.body === undefined ? {} : req.body;
    if (!isObject(body)) return bare(res);
    const p = unregisterBody.safeParse(body);
    if (!p.success) return bare(res);
    const { password, confirmation_phrase: phrase, immediate } = p.data;
    const hasPassword = !!password;
    if (hasPassword === !!phrase) return bare(res);

    const r = repos(db);
    if (hasPassword) {
      if (a.kind !== 'agent') return bare(res);
      const agent = await r.agents.get(a.agentId, { customerId: a.customerId });
      if (!agent) return bare(res);
      // the same guessing throttle as /auth/login, on the agent's username
      const source = req.ip ?? 'unknown';
      const wait = await deps.loginThrottle.attempt(agent.username, source);
      if (wait) return next(wait);
      if (!(await verifyPassword(password!, agent.password_hash))) return bare(res);
      await deps.loginThrottle.succeeded(agent.username, source);
    } else if (phrase !== CONFIRMATION_PHRASE) {
      return bare(res);
    }

    const frozen = await freezeCustomer(db, a.customerId);
    if (!frozen) return bare(res);
    deps.onCustomerChanged?.(frozen.id);
    const email = frozen.email;
    if (!immediate) {
      logger.info({ customer_id: frozen.id }, 'customer frozen, deletion scheduled');
      const effective = new Date(frozen.tm_deletion_scheduled!.getTime() + FROZEN_GRACE_MS);
      await sendQuietly(deps, unregisterMail(config.publicUrl, email, effective));
      return void res.status(200).json(customerJson(frozen));
    }
    await deleteCustomerAccount(db, frozen.id);
    deps.onCustomerChanged?.(frozen.id);
    logger.info({ customer_id: frozen.id }, 'customer deleted at its own request');
    await sendQuietly(deps, unregisterMail(config.publicUrl, email, null));
    const gone = await r.customers.get(frozen.id, { includeDeleted: true });
    res.status(200).json(customerJson(gone!));
  };
}

export function deleteUnregister(deps: AuthDeps): RequestHandler {
  const { db, logger } = deps.ctx;
  return async (req, res) => {
    const a = req.auth;
    if (!a || !mayUnregister(req)) return bare(res, 403);
    const r = await recoverCustomer(db, a.customerId);
    const recovered = r.ok ? r.customer : null;
    if (!recovered) return bare(res);
    deps.onCustomerChanged?.(recovered.id);
    logger.info({ customer_id: recovered.id }, 'customer recovered, deletion cancelled');
    res.status(200).json(customerJson(recovered));
  };
}
