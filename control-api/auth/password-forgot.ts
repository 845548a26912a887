// POST /auth/password-forgot {username}: 200 {} whether or not the username exists; a reset link goes to
// the username (an email address) of a live agent whose account is not deleted. Mails per agent share
// the resend budget (1 per 60 s, 5 per 24 h) so the endpoint cannot flood someone's inbox.
import type { RequestHandler } from 'express';
import { repos } from '../../core/repos';
import { passwordResetMail } from '../../core/smtp';
import { bare, isObject } from './bare';
import { passwordForgotBody } from './schemas';
import { isEmail } from './signup';
import { issueResetToken, RESET_TOKEN_TTL_MS } from './reset-tokens';
import { takeResendSlot } from './resend-limit';
import { sendQuietly, type AuthDeps } from './deps';

export function postPasswordForgot(deps: AuthDeps): RequestHandler {
  const { db, redis, logger } = deps.ctx;
  return async (req, res) => {
    if (!isObject(req.body)) return bare(res);
    const p = passwordForgotBody.safeParse(req.body);
    if (!p.success) return bare(res);
    try {
      const r = repos(db);
      const agent = await r.agents.getByUsername(p.data.username.trim());
      const cu = agent ? await r.customers.get(agent.customer_id) : null;
      if (agent && cu && isEmail(agent.username) && (await takeResendSlot(redis, `reset:${agent.id}`))) {
        const token = await issueResetToken(db, agent, RESET_TOKEN_TTL_MS);
        await sendQuietly(deps, passwordResetMail(deps.ctx.config.publicUrl, agent.username, token, RESET_TOKEN_TTL_MS / 3600_000));
      }
    } catch (err) {
      logger.warn({ err }, 'password-forgot failed');
    }
    res.status(200).json({});
  };
}
