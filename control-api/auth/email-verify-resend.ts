// POST /auth/email-verify-resend: always 200 {}. A new link goes out only for an unverified account that is
// not frozen or deleted and whose admin agent lives, within the budget of resend-limit.ts.
import type { RequestHandler } from 'express';
import { repos } from '../../core/repos';
import { verificationMail } from '../../core/smtp';
import { isObject } from './bare';
import { emailVerifyResendBody } from './schemas';
import { issueVerificationToken, VERIFICATION_TOKEN_TTL_MS } from './verification-tokens';
import { takeResendSlot } from './resend-limit';
import { sendQuietly, type AuthDeps } from './deps';

export function postEmailVerifyResend(deps: AuthDeps): RequestHandler {
  const { db, redis, logger } = deps.ctx;
  return async (req, res) => {
    try {
      const p = isObject(req.body) ? emailVerifyResendBody.safeParse(req.body) : null;
      if (p?.success) {
        const r = repos(db);
        const cu = await r.customers.getByEmail(p.data.email.trim());
        const eligible = cu && !cu.email_verified && (cu.status === 'initial' || cu.status === 'expired');
        const agent = eligible ? await r.agents.getByUsername(cu.email) : null;
        if (cu && agent && agent.customer_id === cu.id && (await takeResendSlot(redis, `verify:${cu.id}`))) {
          const token = await issueVerificationToken(db, cu.id);
          await sendQuietly(deps, verificationMail(deps.ctx.config.publicUrl, cu.email, token, VERIFICATION_TOKEN_TTL_MS / 3600_000));
        }
      }
    } catch (err) {
      // Still 200: the answer must not tell anything about the address.
      logger.warn({ err }, 'email-verify-resend failed');
    }
    res.status(200).json({});
  };
}
