/**
 * Account status gate (spec: Authentication 6): frozen, expired and deleted customers get 403 on the
 * versioned API; when the lookup itself fails the request goes through (fail open).
 */
import type { RequestHandler } from 'express';
import type { AppContext } from '../context';
import { ApiError } from '../../core/errors';
import type { CustomerStatusInfo } from '../../core/repos';
import { isClosedStatus } from '../../core/repos/customers';
import { TtlCache } from '../../core/ttl-cache';
import { formatRfc3339 } from '../../core/time';

export const FROZEN_GRACE_MS = 30 * 24 * 3600 * 1000;

/** The error a closed account (core/repos/customers.ts CLOSED_STATUSES) gets; null for an open one. */
export function statusError(info: CustomerStatusInfo): ApiError | null {
  if (!isClosedStatus(info.status)) return null;
  switch (info.status) {
    case 'frozen': {
      const scheduled = info.tm_deletion_scheduled;
      return new ApiError('ACCOUNT_FROZEN', 'account is frozen and scheduled for deletion', {
        details: [
          {
            deletion_scheduled_at: formatRfc3339(scheduled),
            deletion_effective_at: scheduled ? formatRfc3339(new Date(scheduled.getTime() + FROZEN_GRACE_MS)) : null,
            recovery_endpoint: 'DELETE /auth/unregister',
          },
        ],
      });
    }
    case 'expired':
      return new ApiError('ACCOUNT_EXPIRED', 'account expired: the email address was never verified', {
        details: [{ recovery_endpoint: 'POST /auth/email-verify-resend' }],
      });
    case 'deleted':
      return new ApiError('ACCOUNT_DELETED', 'account deleted');
  }
}

export interface StatusGate {
  middleware: RequestHandler;
  invalidate(customerId: string): void;
}

export function createStatusGate(ctx: AppContext, opts: { cacheTtlMs?: number } = {}): StatusGate {
  const cache = new TtlCache<CustomerStatusInfo | null>(opts.cacheTtlMs ?? 1000);
  return {
    invalidate: (id) => cache.delete(id),
    middleware: (req, _res, next) => {
      const customerId = req.auth?.customerId;
      if (!customerId) return next();
      const cached = cache.get(customerId);
      if (cached !== undefined) return next(cached ? (statusError(cached) ?? undefined) : undefined);
      ctx.statusLookup(customerId).then(
        (info) => {
          cache.set(customerId, info);
          // A customer that does not exist at all: its credentials cannot be valid.
          if (!info) return next(new ApiError('INVALID_CREDENTIALS', 'customer not found'));
          next(statusError(info) ?? undefined);
        },
        (err: unknown) => {
          req.log.warn({ err }, 'customer status lookup failed; failing open');
          next();
        },
      );
    },
  };
}
