// GET /auth/password-reset?token= (the form the mailed link opens) and POST /auth/password-reset
// {token, password}: sets the agent's password and retires every open link of that agent.
import type { RequestHandler } from 'express';
import { repos } from '../../core/repos';
import { bare, isObject } from './bare';
import { passwordResetBody, PASSWORD_MIN_LENGTH } from './schemas';
import { isMailToken } from './secret-token';
import { consumeResetToken, findUsableResetToken } from './reset-tokens';
import { passwordResetPage } from './pages';
import type { AuthDeps } from './deps';
import { sessionsRevoked } from '../middleware/session-revoke';

export function getPasswordReset(deps: AuthDeps): RequestHandler {
  return async (req, res) => {
    const token = req.query.token;
    if (!isMailToken(token)) return bare(res);
    if (!(await findUsableResetToken(deps.ctx.db, token))) return bare(res);
    res.set('Cache-Control', 'no-store').set('Referrer-Policy', 'no-referrer');
    res.status(200).type('html').send(passwordResetPage(token, PASSWORD_MIN_LENGTH));
  };
}

export function postPasswordReset(deps: AuthDeps): RequestHandler {
  const { db, logger } = deps.ctx;
  return async (req, res) => {
    if (!isObject(req.body)) return bare(res);
    const p = passwordResetBody.safeParse(req.body);
    if (!p.success) return bare(res);
    const customerId = await db.transaction(async (trx) => {
      const row = await findUsableResetToken(trx, p.data.token);
      if (!row || !(await consumeResetToken(trx, row))) return null;
      const agent = await repos(trx).agents.update(row.agent_id, { password: p.data.password });
      return agent !== null && agent.customer_id === row.customer_id ? agent.customer_id : null;
    });
    if (!customerId) return bare(res);
    await sessionsRevoked(deps.ctx, customerId); // the new password ended the agent's sessions
    logger.info('agent password reset');
    res.status(200).json({});
  };
}
