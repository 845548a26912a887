/**
 * Call detail records (docs/observability.md "CDR export"): one flat record per call, the same
 * fields in the CSV / JSON-lines export (GET /v1.0/calls/export) and in the `call_cdr` webhook.
 * Read in batches by a keyset query over (tm_create, id), so an export of any size holds one batch
 * in memory at a time. The billing amount is what the billing ledger charged for the call (usage
 * rows whose reference is the call), in micros (1 USD = 1,000,000), positive = cost.
 */
import type { Db } from '../db/knex';
import { formatRfc3339 } from '../time';
import { csvRow } from '../csv';
import type { CallQuality, DirectionSummary } from '../quality/leg';

/** Per direction (`in` heard by us, `out` heard by the party), the call's quality summary keys, in CSV order. */
const QUALITY_KEYS = ['mos_min', 'mos_avg', 'loss_pct', 'jitter_ms', 'rtt_ms'] as const satisfies readonly (keyof DirectionSummary)[];

/** The columns, in CSV order; the quality summary (the call's `quality`) last, empty / null without one. */
export const CDR_FIELDS = [
  'id',
  'customer_id',
  'direction',
  'status',
  'type',
  'source_type',
  'source_target',
  'source_name',
  'destination_type',
  'destination_target',
  'destination_name',
  'hangup_by',
  'hangup_reason',
  'tm_create',
  'tm_ringing',
  'tm_progressing',
  'tm_hangup',
  'duration_sec',
  'billable_sec',
  'billing_amount_credit',
  'flow_id',
  'activeflow_id',
  'groupcall_id',
  'master_call_id',
  'recording_ids',
  'quality_codec',
  'quality_in_mos_min',
  'quality_in_mos_avg',
  'quality_in_loss_pct',
  'quality_in_jitter_ms',
  'quality_in_rtt_ms',
  'quality_out_mos_min',
  'quality_out_mos_avg',
  'quality_out_loss_pct',
  'quality_out_jitter_ms',
  'quality_out_rtt_ms',
] as const;

export type CdrField = (typeof CDR_FIELDS)[number];
export type Cdr = Record<CdrField, string | number | null>;

export const CDR_DIRECTIONS = ['incoming', 'outgoing'] as const;
export const CDR_STATUSES = ['dialing', 'ringing', 'progressing', 'terminating', 'canceling', 'hangup'] as const;

export interface CdrFilter {
  customerId: string;
  /** tm_create in [start, end). */
  start: Date;
  end: Date;
  direction?: (typeof CDR_DIRECTIONS)[number];
  status?: (typeof CDR_STATUSES)[number];
  /** source or destination target equals this (a number, an extension, a SIP URI). */
  address?: string;
  /** calls whose lowest MOS sample, either direction (quality.in/out.mos_min), is below this; calls without quality never match. */
  mosBelow?: number;
}

interface RawRow {
  id: string;
  customer_id: string;
  direction: string;
  status: string;
  type: string;
  source: { type?: string; target?: string; target_name?: string; name?: string } | null;
  destination: { type?: string; target?: string; target_name?: string; name?: string } | null;
  hangup_by: string;
  hangup_reason: string;
  tm_create: Date;
  tm_ringing: Date | null;
  tm_progressing: Date | null;
  tm_hangup: Date | null;
  flow_id: string;
  activeflow_id: string;
  groupcall_id: string;
  master_call_id: string;
  recording_ids: string[];
  billing_amount_credit: string | number | null;
  quality: CallQuality | null;
  /** tm_create exactly as Postgres holds it (microseconds; a JS Date keeps only milliseconds). */
  cursor_ts: string;
}

const secondsBetween = (a: Date | null, b: Date | null): number | null => (a && b ? Math.max(0, Math.round((b.getTime() - a.getTime()) / 1000)) : null);

type QualityField = Extract<CdrField, `quality_${string}`>;

/** The quality columns of one call: a direction not measured (or a call without media) gives nulls. */
function qualityOf(q: CallQuality | null): Record<QualityField, string | number | null> {
  const out = { quality_codec: q?.codec ?? null } as Record<QualityField, string | number | null>;
  for (const d of ['in', 'out'] as const) {
    const s = q?.[d] ?? null;
    for (const k of QUALITY_KEYS) out[`quality_${d}_${k}`] = typeof s?.[k] === 'number' ? s[k] : null;
  }
  return out;
}

export function cdrOf(r: RawRow): Cdr {
  return {
    id: r.id,
    customer_id: r.customer_id,
    direction: r.direction,
    status: r.status,
    type: r.type,
    source_type: r.source?.type ?? '',
    source_target: r.source?.target ?? '',
    source_name: r.source?.target_name || r.source?.name || '',
    destination_type: r.destination?.type ?? '',
    destination_target: r.destination?.target ?? '',
    destination_name: r.destination?.target_name || r.destination?.name || '',
    hangup_by: r.hangup_by,
    hangup_reason: r.hangup_reason,
    tm_create: formatRfc3339(r.tm_create),
    tm_ringing: formatRfc3339(r.tm_ringing),
    tm_progressing: formatRfc3339(r.tm_progressing),
    tm_hangup: formatRfc3339(r.tm_hangup),
    duration_sec: secondsBetween(r.tm_create, r.tm_hangup),
    billable_sec: secondsBetween(r.tm_progressing, r.tm_hangup),
    billing_amount_credit: Number(r.billing_amount_credit ?? 0),
    flow_id: r.flow_id,
    activeflow_id: r.activeflow_id,
    groupcall_id: r.groupcall_id,
    master_call_id: r.master_call_id,
    recording_ids: (r.recording_ids ?? []).join(' '),
    ...qualityOf(r.quality),
  };
}

const COLUMNS = `c.id, c.customer_id, c.direction, c.status, c.type, c.source, c.destination, c.hangup_by, c.hangup_reason,
  c.tm_create, c.tm_ringing, c.tm_progressing, c.tm_hangup, c.flow_id, c.activeflow_id, c.groupcall_id, c.master_call_id,
  c.recording_ids, c.quality, c.tm_create::text AS cursor_ts,
  (SELECT COALESCE(-SUM(b.amount_credit), 0) FROM billings b
     WHERE b.reference_id = c.id AND b.customer_id = c.customer_id AND b.transaction_type = 'usage' AND b.tm_delete IS NULL) AS billing_amount_credit`;

/** One call's record (the call_cdr webhook), scoped to its customer; null when there is no such call. */
export async function cdrOfCall(db: Db, customerId: string, callId: string): Promise<Cdr | null> {
  const { rows } = (await db.raw(`SELECT ${COLUMNS} FROM calls c WHERE c.id = ? AND c.customer_id = ?`, [callId, customerId])) as { rows: RawRow[] };
  return rows[0] ? cdrOf(rows[0]) : null;
}

/**
 * The records matching `f`, oldest first, `batchSize` at a time. Each batch is one indexed query
 * (calls (customer_id, tm_create, id)) continuing after the previous batch's last key, so nothing
 * is held open between batches and a consumer that stops iterating stops the reading.
 */
export async function* cdrBatches(db: Db, f: CdrFilter, batchSize = 500): AsyncGenerator<Cdr[]> {
  let after: { ts: string; id: string } | null = null;
  for (;;) {
    const where: string[] = ['c.customer_id = ?', 'c.tm_create >= ?', 'c.tm_create < ?', 'c.tm_delete IS NULL'];
    const values: (string | number)[] = [f.customerId, f.start.toISOString(), f.end.toISOString()];
    if (f.direction) {
      where.push('c.direction = ?');
      values.push(f.direction);
    }
    if (f.status) {
      where.push('c.status = ?');
      values.push(f.status);
    }
    if (f.address) {
      where.push("(c.source->>'target' = ? OR c.destination->>'target' = ?)");
      values.push(f.address, f.address);
    }
    if (f.mosBelow !== undefined) {
      // a direction never measured is JSON null: its ->> is NULL, which matches nothing
      where.push("((c.quality->'in'->>'mos_min')::float8 < ? OR (c.quality->'out'->>'mos_min')::float8 < ?)");
      values.push(f.mosBelow, f.mosBelow);
    }
    if (after) {
      where.push('(c.tm_create, c.id) > (?::timestamptz, ?::uuid)');
      values.push(after.ts, after.id);
    }
    values.push(batchSize);
    const { rows } = (await db.raw(`SELECT ${COLUMNS} FROM calls c WHERE ${where.join(' AND ')} ORDER BY c.tm_create, c.id LIMIT ?`, values)) as { rows: RawRow[] };
    if (rows.length === 0) return;
    yield rows.map(cdrOf);
    if (rows.length < batchSize) return;
    const last = rows[rows.length - 1]!;
    after = { ts: last.cursor_ts, id: last.id };
  }
}

// ---- encodings --------------------------------------------------------------------------------

export const CSV_HEADER = csvRow(CDR_FIELDS);

/** One record as a CSV row (core/csv.ts: quoting and formula neutralising). */
export function csvLine(c: Cdr): string {
  return csvRow(CDR_FIELDS.map((f) => c[f]));
}

export function jsonLine(c: Cdr): string {
  return JSON.stringify(c) + '\n';
}
