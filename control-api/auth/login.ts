// POST /auth/login: password first, then account status (spec Authentication 6-7). Only expired and
// deleted accounts are refused (403 envelope); a failed status lookup refuses too (fails closed), as a
// bare 400 like every other login failure. Repeated attempts for one username wait (429, login-throttle.ts),
// the same for unknown usernames and wrong passwords.
import type { RequestHandler } from 'express';
import { repos } from '../../core/repos';
import { verifyPassword, hashPassword } from '../../core/password';
import { signToken, newSessionId, LOGIN_TOKEN_TTL_SEC } from '../../core/credentials';
import { statusError } from '../middleware/status-gate';
import { bare, isObject } from './bare';
import { loginBody } from './schemas';
import type { AuthDeps } from './deps';

// Compared against when the username is unknown, so both failures cost one scrypt.
let dummyHash: Promise<string> | null = null;

export function postLogin(deps: AuthDeps): RequestHandler {
  const { db, config } = deps.ctx;
  return async (req, res, next) => {
    if (!isObject(req.body)) return bare(res);
    const p = loginBody.safeParse(req.body);
    if (!p.success) return bare(res);
    const { username, password } = p.data;
    const source = req.ip ?? 'unknown';
    const wait = await deps.loginThrottle.attempt(username, source);
    if (wait) return next(wait);

    const agent = await repos(db).agents.getByUsername(username);
    if (!agent || agent.password_hash === '') {
      dummyHash ??= hashPassword('not-a-password');
      await verifyPassword(password, await dummyHash);
      return bare(res);
    }
    if (!(await verifyPassword(password, agent.password_hash))) return bare(res);
    await deps.loginThrottle.succeeded(username, source);

    let status;
    try {
      status = await deps.ctx.statusLookup(agent.customer_id);
    } catch (err) {
      req.log?.warn({ err }, 'login status lookup failed');
      return bare(res);
    }
    if (!status) return bare(res);
    // The same 403 envelopes as the versioned API's gate; initial and frozen accounts log in.
    if (status.status === 'expired' || status.status === 'deleted') return next(statusError(status));

    // a session of its own (signed out alone) in the agent's current generation (control-api/middleware/sessions.ts)
    const session = { sid: newSessionId(), gen: Number(agent.session_generation) };
    const { token } = await signToken(config.jwtSecret, { typ: 'login', sub: agent.id, customer_id: agent.customer_id, ...session }, LOGIN_TOKEN_TTL_SEC);
    res.cookie('token', token, { httpOnly: true, secure: true, sameSite: 'strict', path: '/', maxAge: LOGIN_TOKEN_TTL_SEC * 1000 });
    res.status(200).json({ username, token });
  };
}
