// POST /auth/email-verify (token -> customer active, email_verified) and GET /auth/email-verify (the page the
// mailed link opens). Verification is also how an expired account comes back (state table: expired ->
// active after a resend), provided the account is unverified, not frozen or deleted, and its admin agent lives.
import type { RequestHandler } from 'express';
import { repos, customerJson, type CustomerRow } from '../../core/repos';
import { welcomeMail } from '../../core/smtp';
import { bare, isObject } from './bare';
import { emailVerifyBody } from './schemas';
import { consumeVerificationToken, findVerificationToken, verificationTokenState } from './verification-tokens';
import { isMailToken } from './secret-token';
import { issueResetToken, WELCOME_TOKEN_TTL_MS } from './reset-tokens';
import { emailVerifyExpiredPage, emailVerifyPage } from './pages';
import { sendQuietly, type AuthDeps } from './deps';
import { lockLiveCustomer } from '../../core/repos/customers';

type Outcome = { ok: false } | { ok: true; customer: CustomerRow; justVerified: boolean };

export function postEmailVerify(deps: AuthDeps): RequestHandler {
  const { db, logger } = deps.ctx;
  return async (req, res) => {
    if (!isObject(req.body)) return bare(res);
    const p = emailVerifyBody.safeParse(req.body);
    if (!p.success) return bare(res);
    const token = p.data.token;

    const out: Outcome = await db.transaction(async (trx): Promise<Outcome> => {
      const row = await findVerificationToken(trx, token);
      if (verificationTokenState(row) !== 'valid') return { ok: false };
      const r = repos(trx);
      const cu = await lockLiveCustomer(trx, row!.customer_id);
      if (!cu) return { ok: false };
      if (cu.email_verified && cu.status === 'active') {
        // Another of the customer's tokens did it already; this one is still valid, so answer the same (voipbin).
        if (!(await consumeVerificationToken(trx, token))) return { ok: false };
        return { ok: true, customer: cu, justVerified: false };
      }
      if (cu.email_verified || (cu.status !== 'initial' && cu.status !== 'expired')) return { ok: false };
      const agent = await r.agents.getByUsername(cu.email);
      if (!agent || agent.customer_id !== cu.id) return { ok: false };
      if (!(await consumeVerificationToken(trx, token))) return { ok: false };
      const updated = await r.customers.update(cu.id, { email_verified: true, status: 'active' });
      return updated ? { ok: true, customer: updated, justVerified: true } : { ok: false };
    });
    if (!out.ok) return bare(res);
    deps.onCustomerChanged?.(out.customer.id);

    if (out.justVerified) {
      logger.info({ customer_id: out.customer.id }, 'customer email verified');
      await sendWelcome(deps, out.customer);
    }
    res.status(200).json({ customer: customerJson(out.customer) });
  };
}

/** The admin agent has no password yet: mail the link that sets the first one. */
async function sendWelcome(deps: AuthDeps, cu: CustomerRow): Promise<void> {
  const agent = await repos(deps.ctx.db).agents.getByUsername(cu.email);
  if (!agent || agent.customer_id !== cu.id || agent.password_hash !== '') return;
  const token = await issueResetToken(deps.ctx.db, agent, WELCOME_TOKEN_TTL_MS);
  await sendQuietly(deps, welcomeMail(deps.ctx.config.publicUrl, cu.email, token, WELCOME_TOKEN_TTL_MS / 3600_000));
}

export function getEmailVerify(deps: AuthDeps): RequestHandler {
  const { db } = deps.ctx;
  return async (req, res) => {
    const token = req.query.token;
    if (!isMailToken(token)) return bare(res);
    const row = await findVerificationToken(db, token);
    const state = verificationTokenState(row);
    if (state === 'unknown' || state === 'used') return bare(res);
    res.set('Cache-Control', 'no-store').set('Referrer-Policy', 'no-referrer');
    if (state === 'expired') {
      const cu = await repos(db).customers.get(row!.customer_id);
      return void res
        .status(200)
        .type('html')
        .send(emailVerifyExpiredPage(cu?.email ?? ''));
    }
    res.status(200).type('html').send(emailVerifyPage(token));
  };
}
