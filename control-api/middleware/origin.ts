/**
 * Cross-site request refusal for the session cookie (docs/security.md "Origin checks"). A
 * state-changing request (POST, PUT, PATCH, DELETE) that authenticates with the `token` cookie, i.e.
 * carries no `Authorization` header and no `token` query parameter (the credential middleware's order),
 * and whose `Origin` is neither PUBLIC_URL's origin nor the request's own (scheme and Host), gets 403
 * PERMISSION_DENIED in the envelope before anything runs. Bearer, query-token and accesskey requests are
 * not looked at, nor are requests without Origin (not a browser: browsers send it on every such
 * request) or without the cookie. `Origin: null` (sandboxed frames) is foreign. The WebSocket upgrades
 * of control-api (ws/guard.ts) apply the same test: a socket carries state both ways.
 */
import type { RequestHandler } from 'express';
import { permissionDenied } from '../../core/errors';
import { readCookie, type CredentialSource } from './credentials';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** `scheme://host[:port]` of a URL, lowercase with the default port dropped; null when not http(s). */
function originOf(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : null;
  } catch {
    return null;
  }
}

/** Whether the credential middleware would authenticate this request by the `token` cookie. */
function cookieAuthenticated(req: CredentialSource): boolean {
  if (typeof req.headers.authorization === 'string' && req.headers.authorization.length > 0) return false;
  if (!readCookie(req, 'token')) return false;
  const q = (req.query as Record<string, unknown>).token;
  return !(typeof q === 'string' && q.length > 0);
}

/**
 * Whether a request authenticates with the session cookie from a page of another origin than
 * PUBLIC_URL's or the request's own (`ownOrigin`: its scheme and Host).
 */
export function foreignCookieRequest(publicUrl: string, req: CredentialSource, ownOrigin: string): boolean {
  const origin = req.headers.origin;
  if (origin === undefined || !cookieAuthenticated(req)) return false;
  const o = originOf(origin);
  return !(o !== null && (o === originOf(publicUrl) || o === originOf(ownOrigin)));
}

export const foreignOriginRefused = () => permissionDenied("cross-site request with the session cookie refused: its Origin is not this platform's");

export function cookieOriginGuard(publicUrl: string): RequestHandler {
  return (req, _res, next) => {
    if (!STATE_CHANGING.has(req.method)) return next();
    if (foreignCookieRequest(publicUrl, req, `${req.protocol}://${req.get('host') ?? ''}`)) return next(foreignOriginRefused());
    next();
  };
}
