// POST /auth/delegate {customer_id, reason}: a ProjectSuperAdmin obtains a support token that acts as an
// admin of another customer. Lifetime: DELEGATE_TOKEN_TTL_SEC (30 minutes; voipbin uses 8 hours, we keep
// support sessions short). No delegation from a delegate token. Every issue is written to the audit log.
// Failures are bare statuses (voipbin): 400 body, 422 bad customer_id or reason, 403 not a super admin,
// 404 unknown or deleted customer.
import type { RequestHandler } from 'express';
import { randomUUID } from 'node:crypto';
import { isUuid } from '../../core/ids';
import { repos } from '../../core/repos';
import { isProjectSuperAdmin } from '../../core/permissions';
import { signToken, newSessionId, DELEGATE_TOKEN_TTL_SEC } from '../../core/credentials';
import { formatRfc3339 } from '../../core/time';
import { bare, isObject } from './bare';
import { delegateBody } from './schemas';
import type { AuthDeps } from './deps';

export function postDelegate(deps: AuthDeps): RequestHandler {
  const { db, config, logger } = deps.ctx;
  return async (req, res) => {
    const a = req.auth;
    if (!a) return bare(res, 401);
    if (!isObject(req.body)) return bare(res);
    const b = req.body;
    if (typeof b.customer_id !== 'string' || typeof b.reason !== 'string') return bare(res);
    const p = delegateBody.safeParse(b);
    if (!p.success) return bare(res, Object.keys(b).some((k) => k !== 'customer_id' && k !== 'reason') ? 400 : 422);
    if (!isUuid(p.data.customer_id)) return bare(res, 422);

    // Only a super admin logged in as itself: no access keys, direct or delegate tokens.
    const agent = a.kind === 'agent' ? await repos(db).agents.get(a.agentId) : null;
    if (!agent || !isProjectSuperAdmin(Number(agent.permission))) {
      logger.warn({ audit: true, event: 'delegate_token_denied', kind: a.kind, customer_id: a.customerId }, 'delegate token denied');
      return bare(res, 403);
    }
    const target = await repos(db).customers.get(p.data.customer_id.toLowerCase());
    if (!target || target.status === 'deleted') return bare(res, 404);

    const jti = randomUUID();
    const { token, expiresAt } = await signToken(
      config.jwtSecret,
      {
        typ: 'delegate',
        sub: agent.id,
        customer_id: target.id,
        delegator_customer_id: agent.customer_id,
        sid: newSessionId(),
        gen: Number(agent.session_generation),
        // signing out the login session that asked for it ends it too
        ...(a.kind === 'agent' && a.session?.id ? { psid: a.session.id } : {}),
      },
      DELEGATE_TOKEN_TTL_SEC,
    );
    logger.info({ audit: true, event: 'delegate_token_issued', jti, sub: agent.id, target_customer_id: target.id, reason: p.data.reason, expire: expiresAt }, 'delegate token issued');
    res.status(200).json({ token, customer_id: target.id, expire: formatRfc3339(expiresAt) });
  };
}
