/**
 * Twilio's Monitor API (issue 54), mounted at /v1 by app.ts, as monitor.twilio.com serves it: the same
 * per-IP limit, basic auth (AccountSid + AuthToken or an API key; no account in the path, so the
 * credential's account is the one: auth.ts `pathAccount: false`), per-account limit and error shape as
 * /2010-04-01 (router.ts). Only Alerts exists here (alerts.ts); anything else is 20404.
 */
import { Router, type RequestHandler } from 'express';
import type { AppContext } from '../context';
import type { Limiter } from '../../core/ratelimit';
import { twilioAuth } from './auth';
import { alertsRouter } from './alerts';
import { twilioErrorHandler, twilioRouteNotFound } from './errors';
import { accountLimit } from './router';

export function createTwilioMonitorRouter(ctx: AppContext, opts: { ipLimit?: RequestHandler[]; accountLimit?: Limiter | null } = {}): Router {
  const r = Router();
  for (const l of opts.ipLimit ?? []) r.use(l);
  r.use(twilioAuth(ctx, { pathAccount: false }));
  if (opts.accountLimit) r.use(accountLimit(opts.accountLimit));
  r.use(alertsRouter(ctx));
  r.use(twilioRouteNotFound);
  r.use(twilioErrorHandler);
  return r;
}
