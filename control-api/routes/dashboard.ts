/**
 * GET /dashboard (our extension, docs/observability.md "Dashboard"): the caller's call volume,
 * concurrency, answer-seizure ratio, average call duration, MOS distribution with the worst calls,
 * and webhook delivery failures over a range, in fixed buckets (core/calls/dashboard.ts). The
 * console's dashboard page draws it; the response's one declaration is core/calls/dashboard-schema.ts.
 */
import { z } from 'zod';
import { defineRoute } from '../route';
import { invalidParameter } from '../../core/errors';
import { realDate } from './calls-export';
import { dashboard } from '../../core/calls/dashboard';
import { DASHBOARD_RANGES, DASHBOARD_RANGE_NAMES, MOS_BINS, dashboardResponse } from '../../core/calls/dashboard-schema';

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/;

export const routes = [
  defineRoute({
    method: 'get',
    path: '/dashboard',
    tag: 'Call',
    summary: 'Call, AI and webhook figures over a range, bucketed (the console dashboard)',
    description:
      `Our extension. range: ${Object.entries(DASHBOARD_RANGES)
        .map(([k, v]) => `${k} (buckets of ${v.stepMs / 60_000} min)`)
        .join(', ')}. The range ends at the bucket boundary after \`end\` (default now). ` + `MOS bins: ${MOS_BINS.join(', ')}. Only the caller's customer; soft-deleted calls are left out.`,
    permission: 'manager',
    query: z.object({
      range: z.enum(DASHBOARD_RANGE_NAMES).optional().describe('default 24h'),
      end: z.string().max(40).regex(ISO_INSTANT, 'must be an ISO 8601 date-time with Z or an offset').optional().describe('the moment the range ends (default now)'),
    }),
    response: dashboardResponse,
    handler: async ({ ctx, auth, query }) => {
      const end = query.end === undefined ? new Date() : new Date(query.end);
      if (query.end !== undefined && !realDate(query.end)) throw invalidParameter('end', 'end is not a real date-time');
      return dashboard(ctx.db, auth.customerId, query.range ?? '24h', end);
    },
  }),
];
