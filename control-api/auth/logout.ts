// POST /auth/logout: signs out the session of the login or delegate token the request carries
// (Authorization: Bearer, the `token` query parameter or the `token` cookie) and expires the cookie.
// 204 on success. No credentials: 401 AUTHENTICATION_REQUIRED; a bad, expired or already signed-out
// token: 401 INVALID_CREDENTIALS (envelopes of the shared middleware); an accesskey or a direct token,
// which have no session to end: 403 DIRECT_ACCESS_NOT_SUPPORTED. The account gate does not apply: a
// frozen account's agent signs out like any other. The console's POST /console/sign-out does the same.
import type { RequestHandler, Response } from 'express';
import { directAccessNotSupported } from '../../core/errors';
import { signOutSession } from '../middleware/session-revoke';
import type { AppContext } from '../context';

/** Expires the `token` cookie POST /auth/login set (page script cannot clear an HttpOnly cookie). */
export function expireTokenCookie(res: Response): void {
  res.cookie('token', '', { httpOnly: true, secure: true, sameSite: 'strict', path: '/', maxAge: 0 });
}

export function postLogout(ctx: AppContext): RequestHandler {
  return async (req, res, next) => {
    const a = req.auth;
    if (!a || (a.kind !== 'agent' && a.kind !== 'delegate')) return next(directAccessNotSupported());
    await signOutSession(ctx, a);
    res.set('Cache-Control', 'no-store');
    expireTokenCookie(res);
    res.status(204).end();
  };
}
