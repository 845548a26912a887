// The auth group, served at /auth (no version prefix; /v1.0/auth/... is not a route). Mount with
//   app.use('/auth', authRouter(deps))
// before the versioned API and the 404 handler, with no global JSON parser in front: bodies are parsed
// here so that a broken body is a bare 400.
import express, { type RequestHandler, type Router } from 'express';
import type { Config } from '../../core/config';
import type { AuthMount } from '../app';
import { createMailer, type Mailer } from '../../core/smtp';
import { bareJsonBody, lenientJsonBody } from './bare';
import { signup } from './signup';
import { getEmailVerify, postEmailVerify } from './email-verify';
import { postEmailVerifyResend } from './email-verify-resend';
import { postLogin } from './login';
import { postPasswordForgot } from './password-forgot';
import { getPasswordReset, postPasswordReset } from './password-reset';
import { deleteUnregister, postUnregister } from './unregister';
import { postBoot, postBootRefresh } from './boot';
import { postDelegate } from './delegate';
import { postLogout } from './logout';
import type { AuthDeps } from './deps';
import { sessionsRevoked } from '../middleware/session-revoke';
import { createLoginThrottle } from './login-throttle';

export type { AuthDeps } from './deps';
export { registerDirectResolver, type DirectResolver, type DirectTarget } from './direct-registry';

/** The hook control-api/app.ts calls: the shared middlewares come from the app, the mailer from config. */
export function createAuthRouter(m: AuthMount): Router {
  return authRouter(authDepsFromMount(m));
}

export function authDepsFromMount(m: AuthMount): AuthDeps {
  const cfg = m.ctx.config as Readonly<Config> & { directScopeVersion?: number };
  return {
    ctx: m.ctx,
    mailer: createMailerFromConfig(m.ctx.config),
    publicLimiter: m.limiters.authPublic,
    protectedLimiter: m.limiters.authProtected,
    authenticate: m.credentials.required,
    statusGate: m.statusGate.middleware,
    directScopeVersion: () => cfg.directScopeVersion ?? 1,
    loginThrottle: createLoginThrottle(m.ctx.redis, m.ctx.config.redisKeyPrefix),
    onCustomerChanged: (id) => {
      m.statusGate.invalidate(id);
      // a freeze ended every session: cached credentials go, open WebSockets close now
      void sessionsRevoked(m.ctx, id);
    },
  };
}

export function createMailerFromConfig(config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'outboxDir'>): Mailer {
  return createMailer({ smtpUrl: config.smtpUrl || undefined, from: config.mailFrom, outboxDir: config.outboxDir });
}

/**
 * The shared status gate, except that a frozen account passes: unregistering again (immediate) and
 * cancelling the deletion are how a frozen account recovers (voipbin exempts /auth/unregister too).
 */
function gateAllowingFrozen(deps: AuthDeps): RequestHandler {
  return (req, res, next) => {
    const id = req.auth?.customerId;
    if (!id) return deps.statusGate(req, res, next);
    deps.ctx.statusLookup(id).then(
      (info) => (info?.status === 'frozen' ? next() : deps.statusGate(req, res, next)),
      () => deps.statusGate(req, res, next),
    );
  };
}

export function authRouter(deps: AuthDeps): Router {
  const r = express.Router();
  const json = bareJsonBody();
  const { publicLimiter, protectedLimiter, authenticate, statusGate } = deps;

  // Authenticated by the shared middleware; their own per-IP limiter (spec Limits).
  const unregisterGate = gateAllowingFrozen(deps);
  r.post('/unregister', protectedLimiter, authenticate, unregisterGate, ...json, postUnregister(deps));
  r.delete('/unregister', protectedLimiter, authenticate, unregisterGate, deleteUnregister(deps));
  r.post('/delegate', protectedLimiter, authenticate, statusGate, ...json, postDelegate(deps));
  // no account gate: any agent may end its session (a frozen account's too)
  r.post('/logout', protectedLimiter, authenticate, postLogout(deps.ctx));

  // Everything else under /auth shares one per-IP limiter.
  r.use(publicLimiter);
  r.post('/signup', ...json, signup(deps));
  r.post('/email-verify', ...json, postEmailVerify(deps));
  r.get('/email-verify', getEmailVerify(deps));
  r.post('/email-verify-resend', ...lenientJsonBody(), postEmailVerifyResend(deps));
  r.post('/login', ...json, postLogin(deps));
  r.post('/password-forgot', ...json, postPasswordForgot(deps));
  r.get('/password-reset', getPasswordReset(deps));
  r.post('/password-reset', ...json, postPasswordReset(deps));
  r.post('/boot', ...json, postBoot(deps));
  // A direct token, not the account gate: direct tokens skip it (voipbin); refresh checks the customer itself.
  r.post('/boot/refresh', authenticate, ...json, postBootRefresh(deps));
  return r;
}

export { authOpenApiPaths } from './openapi';
