/**
 * GET /quality_alarms (our extension, docs/observability.md "Quality alarms"): the `call_quality_alarm`
 * events of a time range, newest first, paginated like every list. A ProjectSuperAdmin sees every
 * customer's (or one, `customer_id`); a customer admin only its own (`customer_id` naming another
 * customer is refused). Read from the stored events (core/quality/alarms.ts).
 */
import { z } from 'zod';
import { defineRoute } from '../route';
import { invalidParameter, permissionDenied } from '../../core/errors';
import { isProjectSuperAdmin } from '../../core/permissions';
import { ALARM_STATES, QUALITY_DIRECTIONS, QUALITY_METRICS, listQualityAlarms } from '../../core/quality/alarms';
import { instant } from './calls-export';
import { listOf } from './schemas';

/** The longest range one request may cover (a page at a time: the bound is for the index range scan). */
export const MAX_ALARM_RANGE_DAYS = 31;

const alarm = z.object({
  id: z.string().describe('the event id'),
  customer_id: z.string(),
  call_id: z.string().describe('the call (leg) whose sample crossed the threshold'),
  activeflow_id: z.string().nullable(),
  timestamp: z.string().describe('when the sample was taken, RFC 3339 with microseconds'),
  codec: z.string().nullable(),
  direction: z.enum(QUALITY_DIRECTIONS).describe('in: what the platform heard from the party; out: what the party heard (its RTCP)'),
  metric: z.enum(QUALITY_METRICS),
  state: z.enum(ALARM_STATES).describe('raised: crossed the threshold; cleared: back within it'),
  value: z.number(),
  threshold: z.number(),
});

export const routes = [
  defineRoute({
    method: 'get',
    path: '/quality_alarms',
    tag: 'Call',
    summary: 'Call quality alarms of a time range (platform-wide for a ProjectSuperAdmin)',
    description:
      `Our extension. The call_quality_alarm events whose timestamp is in [start, end), newest first; the range may span at most ${MAX_ALARM_RANGE_DAYS} days. ` +
      "A ProjectSuperAdmin sees every customer's alarms, or one customer's with customer_id; a customer admin sees its own only.",
    permission: 'admin',
    paginated: true,
    query: z.object({
      start: instant().describe('first alarm timestamp included (ISO 8601)'),
      end: instant().describe(`alarms before this (ISO 8601); at most ${MAX_ALARM_RANGE_DAYS} days after start`),
      customer_id: z.string().uuid().optional().describe("one customer's alarms (a customer admin: its own id only)"),
      metric: z.enum(QUALITY_METRICS).optional(),
      direction: z.enum(QUALITY_DIRECTIONS).optional(),
      state: z.enum(ALARM_STATES).optional(),
    }),
    response: listOf(alarm),
    handler: async ({ ctx, auth, query, page }) => {
      const start = new Date(query.start);
      const end = new Date(query.end);
      if (end.getTime() <= start.getTime()) throw invalidParameter('end', 'end must be after start');
      if (end.getTime() - start.getTime() > MAX_ALARM_RANGE_DAYS * 86_400_000) throw invalidParameter('end', `the range may span at most ${MAX_ALARM_RANGE_DAYS} days`);
      let customerId: string | undefined = query.customer_id;
      if (!isProjectSuperAdmin(auth.permission)) {
        if (customerId !== undefined && customerId !== auth.customerId) throw permissionDenied("only a project super admin may read another customer's alarms");
        customerId = auth.customerId;
      }
      return listQualityAlarms(ctx.db, { start, end, customerId, metric: query.metric, direction: query.direction, state: query.state }, page);
    },
  }),
];
