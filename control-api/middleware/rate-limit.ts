/** Express middlewares over core/ratelimit: per-IP tiers and per-customer tiers chosen by credential kind. */
import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { createLimiter, type Limiter, type TierName } from '../../core/ratelimit';
import { rateLimited } from '../../core/errors';

export interface Limiters {
  /** Per IP: the shared limiter of the unauthenticated /auth/* endpoints. */
  authPublic: RequestHandler;
  /** Per IP: /auth/unregister and /auth/delegate. */
  authProtected: RequestHandler;
  /** Per IP: every /v1.0 path. */
  v1Ip: RequestHandler;
  /** Per customer, after the credential middleware (agent+accesskey share one bucket). */
  customer: RequestHandler;
  /** Raw limiters, for tests and WebSocket code. */
  raw: Record<TierName, Limiter>;
}

function byIp(l: Limiter): RequestHandler {
  return (req, _res, next) => {
    l.consume(req.ip ?? 'unknown').then((r) => next(r.allowed ? undefined : rateLimited(r.limitedBy, r.retryAfterSec)), next);
  };
}

/** Limits switched off (RATE_LIMIT_SCALE=0): the request goes on in the same tick, without a promise per tier. */
const pass: RequestHandler = (_req, _res, next) => next();

/** Whether a limiter of `createLimiters` is switched off (a chain may leave it out). */
export const isPassThrough = (mw: RequestHandler): boolean => mw === pass;

export function createLimiters(redis: Redis, opts: { scale: number; prefix: string }): Limiters {
  const mk = (t: TierName) => createLimiter(redis, t, opts);
  const off = !(opts.scale > 0);
  const raw = {
    auth_public: mk('auth_public'),
    auth_protected: mk('auth_protected'),
    v1_ip: mk('v1_ip'),
    customer: mk('customer'),
    customer_direct: mk('customer_direct'),
    customer_delegate: mk('customer_delegate'),
  } satisfies Record<TierName, Limiter>;
  return {
    raw,
    authPublic: off ? pass : byIp(raw.auth_public),
    authProtected: off ? pass : byIp(raw.auth_protected),
    v1Ip: off ? pass : byIp(raw.v1_ip),
    customer: off
      ? pass
      : (req, _res, next) => {
          const a = req.auth;
          if (!a) return next();
          const l = a.kind === 'direct' ? raw.customer_direct : a.kind === 'delegate' ? raw.customer_delegate : raw.customer;
          l.consume(a.customerId).then((r) => next(r.allowed ? undefined : rateLimited(r.limitedBy, r.retryAfterSec)), next);
        },
  };
}
