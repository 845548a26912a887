/**
 * Quality alarms across customers (issue 38, docs/observability.md "Quality alarms"): the stored
 * `call_quality_alarm` events (written by the event store, core/events/store.ts) of a time range,
 * newest first (stream order within a timestamp), a page at a time by a (timestamp, event id) cursor. The migration 0946 partial indexes
 * keep this a range scan over the alarms alone, platform-wide or for one customer.
 */
import type { Db } from '../db/knex';
import { decodePageToken, encodePageToken, type Page, type PageParams } from '../pagination';
import type { QualityDirection, QualityMetric } from './leg';

export const ALARM_STATES = ['raised', 'cleared'] as const;
export const QUALITY_METRICS = ['mos', 'loss_pct', 'jitter_ms', 'rtt_ms'] as const satisfies readonly QualityMetric[];
export const QUALITY_DIRECTIONS = ['in', 'out'] as const satisfies readonly QualityDirection[];

export interface QualityAlarmFilter {
  /** first event timestamp included */
  start: Date;
  /** timestamps before this */
  end: Date;
  /** one customer's alarms; undefined: every customer's */
  customerId?: string;
  metric?: QualityMetric;
  direction?: QualityDirection;
  state?: (typeof ALARM_STATES)[number];
}

export interface QualityAlarmRecord {
  id: string;
  customer_id: string;
  call_id: string;
  activeflow_id: string | null;
  timestamp: string;
  codec: string | null;
  direction: QualityDirection;
  metric: QualityMetric;
  state: (typeof ALARM_STATES)[number];
  value: number;
  threshold: number;
}

interface Row {
  id: string;
  customer_id: string;
  resource_id: string;
  activeflow_id: string | null;
  timestamp: Date;
  us: string | number;
  data: Record<string, unknown>;
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const number = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const oneOf = <T extends string>(all: readonly T[], v: unknown, dflt: T): T => all.find((x) => x === v) ?? dflt;

/** The timestamp with microseconds, as the pagination tokens write it. */
function usIso(us: number): string {
  return encodePageToken(us, '').slice(0, -1);
}

function record(r: Row): QualityAlarmRecord {
  const d = r.data;
  return {
    id: r.id,
    customer_id: r.customer_id,
    call_id: r.resource_id,
    activeflow_id: r.activeflow_id,
    timestamp: usIso(Number(r.us)),
    codec: text(d.codec),
    direction: oneOf(QUALITY_DIRECTIONS, d.direction, 'in'),
    metric: oneOf(QUALITY_METRICS, d.metric, 'mos'),
    state: oneOf(ALARM_STATES, d.state, 'raised'),
    value: number(d.value),
    threshold: number(d.threshold),
  };
}

export async function listQualityAlarms(db: Db, f: QualityAlarmFilter, page: PageParams): Promise<Page<QualityAlarmRecord>> {
  const q = db('events')
    .where('event_type', 'call_quality_alarm')
    .where('timestamp', '>=', f.start)
    .where('timestamp', '<', f.end)
    .select<Row[]>('id', 'customer_id', 'resource_id', 'activeflow_id', 'timestamp', 'data', db.raw('(extract(epoch from "timestamp") * 1000000)::bigint as us'));
  if (f.customerId) q.where('customer_id', f.customerId);
  // jsonb fields: compared as text, on the rows the range already narrowed
  if (f.metric) q.whereRaw(`data->>'metric' = ?`, [f.metric]);
  if (f.direction) q.whereRaw(`data->>'direction' = ?`, [f.direction]);
  if (f.state) q.whereRaw(`data->>'state' = ?`, [f.state]);
  const cursor = page.pageToken ? decodePageToken(page.pageToken) : null;
  if (cursor) {
    // events of the same microsecond keep their stream order (seq), as the timelines do
    if (cursor.id) q.whereRaw('("timestamp", seq) < (?::timestamptz, coalesce((select seq from events where id = ?::uuid), 0))', [cursor.ts, cursor.id]);
    else q.where('timestamp', '<', cursor.ts);
  }
  const rows = await q
    .orderBy([
      { column: 'timestamp', order: 'desc' },
      { column: 'seq', order: 'desc' },
    ])
    .limit(page.pageSize + 1);
  const more = rows.length > page.pageSize;
  const shown = more ? rows.slice(0, page.pageSize) : rows;
  const last = shown[shown.length - 1];
  return { result: shown.map(record), next_page_token: more && last ? encodePageToken(Number(last.us), last.id) : '' };
}
