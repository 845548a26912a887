/**
 * HTTP basic auth of the Twilio-compatible API. The username is the AccountSid (password: the
 * customer's derived AuthToken, core/twilio/auth-token.ts) or an API key SID `SK…` (password: that
 * access key's secret, checked as control-api checks access keys: SHA-256 at rest, expiry, deletion).
 * The credential must belong to the AccountSid in the path: anything else is 20003 (bad credential)
 * or 20404 (good credential, another account's path). Then the account status gate, as on /v1.0,
 * in Twilio's shape (20005).
 */
import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { AppContext } from '../context';
import { accountSid, fromSid } from '../../core/twilio/sids';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { isAccesskeyExpired } from '../../core/repos/accesskeys';
import { clock } from '../../core/clock';
import { statusError } from '../middleware/status-gate';
import { fromApiError, TwilioError, unauthenticated } from './errors';

/** Who a Twilio request acts as: the customer, and the access key when an API key SID was used. */
export interface TwilioAuth {
  customerId: string;
  accountSid: string;
  /** The customer's current AuthToken: the key of the signatures on its callbacks. */
  authToken: string;
  accesskeyId: string | null;
}

function basic(header: unknown): { user: string; pass: string } | null {
  if (typeof header !== 'string') return null;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m || m[1]!.length > 1024) return null;
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const i = text.indexOf(':');
  if (i < 0) return null;
  return { user: text.slice(0, i), pass: text.slice(i + 1) };
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The customer's current AuthToken, or null when no such (undeleted) customer exists. */
export async function currentAuthToken(ctx: AppContext, customerId: string): Promise<string | null> {
  const c = await ctx.repos.customers.get(customerId);
  return c ? twilioAuthToken(ctx.config.jwtSecret, c.id, c.twilio_token_generation) : null;
}

async function authenticate(ctx: AppContext, user: string, pass: string): Promise<{ customerId: string; accesskeyId: string | null } | null> {
  if (pass.length === 0 || pass.length > 256) return null;
  const customerId = fromSid('AC', user);
  if (customerId) {
    const token = await currentAuthToken(ctx, customerId);
    return token !== null && sameText(token, pass) ? { customerId, accesskeyId: null } : null;
  }
  const keyId = fromSid('SK', user);
  if (!keyId) return null;
  const row = await ctx.repos.accesskeys.getByToken(pass);
  if (!row || row.id !== keyId || isAccesskeyExpired(row, clock.nowMs())) return null;
  return { customerId: row.customer_id, accesskeyId: row.id };
}

/**
 * Express middleware for routes under /Accounts/:AccountSid: sets res.locals.twilio (TwilioAuth). With
 * `pathAccount: false` (the Monitor API's /v1, whose paths name no account) the credential's account is the one.
 */
export function twilioAuth(ctx: AppContext, opts: { pathAccount?: boolean } = {}): RequestHandler {
  return (req, res, next) => {
    const cred = basic(req.headers.authorization);
    if (!cred) return next(unauthenticated());
    const run = async (): Promise<void> => {
      const who = await authenticate(ctx, cred.user, cred.pass);
      if (!who) throw unauthenticated();
      const pathAccount = req.params.AccountSid;
      if (opts.pathAccount !== false && (typeof pathAccount !== 'string' || fromSid('AC', pathAccount.replace(/\.json$/, '')) !== who.customerId)) {
        throw new TwilioError(404, 20404, `The requested resource /2010-04-01/Accounts/${encodeURIComponent(String(pathAccount ?? ''))} was not found`);
      }
      const info = await ctx.statusLookup(who.customerId);
      if (!info) throw unauthenticated();
      const refused = statusError(info);
      if (refused) throw fromApiError(refused);
      const authToken = await currentAuthToken(ctx, who.customerId);
      if (!authToken) throw unauthenticated();
      const auth: TwilioAuth = { customerId: who.customerId, accountSid: accountSid(who.customerId), authToken, accesskeyId: who.accesskeyId };
      res.locals.twilio = auth;
    };
    run().then(() => next(), next);
  };
}

export function authOf(locals: Record<string, unknown>): TwilioAuth {
  const a = locals.twilio as TwilioAuth | undefined;
  if (!a) throw new Error('twilio auth missing: route mounted without twilioAuth');
  return a;
}
