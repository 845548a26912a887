/**
 * Credential primitives shared by control-api's middleware and the /auth group:
 * JWTs (HS256 with config.jwtSecret, via jose) and accesskey secrets (sha256 at rest).
 *
 * Claim layout (every token): `typ` says which kind, `customer_id` is the customer the token acts
 * for, `exp`/`iat` as usual.
 *   login    : sub = agent id                         (7 days, POST /auth/login)
 *   direct   : resource_type, resource_id, allowed_resource_id, scope_version   (4 h, /auth/boot)
 *   delegate : sub = ProjectSuperAdmin agent id, delegator_customer_id          (short, /auth/delegate)
 * Login and delegate tokens also carry their session: `sid` (random, revoked one by one at sign-out)
 * and `gen` (the agent's session_generation when signed; a password change or a freeze raises it).
 * A token without them (signed before sessions existed) counts as generation 0 with no session id.
 * A delegate token also names the login session that asked for it (`psid`): signing that out ends it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { clock } from './clock';

export const LOGIN_TOKEN_TTL_SEC = 7 * 24 * 3600;
export const DIRECT_TOKEN_TTL_SEC = 4 * 3600;
export const DELEGATE_TOKEN_TTL_SEC = 30 * 60;

/** The session part of login and delegate tokens. */
export interface SessionClaims {
  sid?: string;
  gen?: number;
  /** Delegate tokens: the `sid` of the login token that asked for it. */
  psid?: string;
}
export interface LoginClaims extends SessionClaims {
  typ: 'login';
  sub: string;
  customer_id: string;
}
export interface DirectClaims {
  typ: 'direct';
  customer_id: string;
  resource_type: string;
  resource_id: string;
  allowed_resource_id: string;
  scope_version: number;
}
export interface DelegateClaims extends SessionClaims {
  typ: 'delegate';
  sub: string;
  customer_id: string;
  delegator_customer_id: string;
}
export type TokenClaims = LoginClaims | DirectClaims | DelegateClaims;
export type VerifiedClaims = TokenClaims & { iat: number; exp: number };

const keyCache = new Map<string, Uint8Array>();
function key(secret: string): Uint8Array {
  let k = keyCache.get(secret);
  if (!k) {
    k = new TextEncoder().encode(secret);
    keyCache.set(secret, k);
  }
  return k;
}

/** Signs claims for `ttlSec` seconds from the platform clock. */
export async function signToken(secret: string, claims: TokenClaims, ttlSec: number): Promise<{ token: string; expiresAt: Date }> {
  const iat = Math.floor(clock.nowMs() / 1000);
  const exp = iat + ttlSec;
  const token = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt(iat).setExpirationTime(exp).sign(key(secret));
  return { token, expiresAt: new Date(exp * 1000) };
}

export class TokenError extends Error {
  constructor(
    readonly kind: 'expired' | 'invalid',
    message: string,
  ) {
    super(message);
  }
}

/** Verifies signature, expiry (platform clock) and claim shape; throws TokenError. */
export async function verifyToken(secret: string, token: string): Promise<VerifiedClaims> {
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, key(secret), {
      algorithms: ['HS256'],
      currentDate: clock.now(),
    }));
  } catch (e) {
    if (e instanceof joseErrors.JWTExpired) throw new TokenError('expired', 'token expired');
    throw new TokenError('invalid', 'token invalid');
  }
  const str = (k: string) => typeof payload[k] === 'string' && (payload[k] as string).length > 0;
  const ok =
    typeof payload.exp === 'number' &&
    str('customer_id') &&
    ((payload.typ === 'login' && str('sub')) ||
      (payload.typ === 'delegate' && str('sub') && str('delegator_customer_id')) ||
      (payload.typ === 'direct' && str('resource_type') && str('resource_id') && str('allowed_resource_id') && typeof payload.scope_version === 'number'));
  const session =
    payload.typ === 'direct' ||
    ((payload.sid === undefined || (typeof payload.sid === 'string' && /^[A-Za-z0-9_-]{16,64}$/.test(payload.sid))) &&
      (payload.psid === undefined || (payload.typ === 'delegate' && typeof payload.psid === 'string' && /^[A-Za-z0-9_-]{16,64}$/.test(payload.psid))) &&
      (payload.gen === undefined || (typeof payload.gen === 'number' && Number.isSafeInteger(payload.gen) && payload.gen >= 0)));
  if (!ok || !session) throw new TokenError('invalid', 'token claims invalid');
  return payload as unknown as VerifiedClaims; // cast: the checks above are exactly VerifiedClaims' shape
}

/** A fresh session id for a login or delegate token (22 base64url characters). */
export function newSessionId(): string {
  return randomBytes(16).toString('base64url');
}

/** Accesskey secrets: `ak_` + 32 base64url characters; the prefix shown later is the first 11. */
export const ACCESSKEY_PREFIX_LEN = 11;

export function generateAccesskeyToken(): { token: string; hash: string; prefix: string } {
  const token = 'ak_' + randomBytes(24).toString('base64url');
  return { token, hash: hashAccesskeyToken(token), prefix: token.slice(0, ACCESSKEY_PREFIX_LEN) };
}

export function hashAccesskeyToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** 64 lowercase hex characters (email-verify, password-reset, provisioning tokens). */
export function randomHexToken(bytes = 32): string {
  return randomBytes(bytes).toString('hex');
}

export function sha256Hex(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}
