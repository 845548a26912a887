/**
 * Bulk call rows for the CDR export tests and benchmark: `n` ended calls of one customer, created
 * one every `stepMs` from `from`, inserted by Postgres itself (generate_series), so 100,000 rows
 * take a second and never pass through this process. Every other call carries a quality summary
 * (core/quality/leg.ts CallQuality), so the export's quality columns are part of what is measured.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

export async function insertCalls(db: Knex, customerId: string, n: number, from: Date, stepMs = 500): Promise<void> {
  const empty = '00000000-0000-0000-0000-000000000000';
  await db.raw(
    `INSERT INTO calls (id, customer_id, owner_id, flow_id, activeflow_id, type, master_call_id, recording_id, groupcall_id,
       source, destination, status, direction, hangup_by, hangup_reason, tm_create, tm_ringing, tm_progressing, tm_hangup, tm_update, quality)
     SELECT gen_random_uuid(), ?::uuid, ?::uuid, ?::uuid, ?::uuid, 'flow', ?::uuid, ?::uuid, ?::uuid,
       jsonb_build_object('type', 'tel', 'target', '+1555' || lpad((i % 10000000)::text, 7, '0')),
       jsonb_build_object('type', 'extension', 'target', 'ext' || (i % 500)::text, 'target_name', 'Desk ' || (i % 500)::text),
       'hangup', CASE WHEN i % 3 = 0 THEN 'incoming' ELSE 'outgoing' END, 'remote', 'normal',
       t, t + interval '2 seconds', t + interval '5 seconds', t + interval '65 seconds', t + interval '65 seconds',
       CASE WHEN i % 2 = 0 THEN jsonb_build_object('codec', 'PCMU',
         'in', jsonb_build_object('mos_min', 3.9 + (i % 50) / 100.0, 'mos_avg', 4.2, 'loss_pct', (i % 30) / 10.0, 'jitter_ms', 12.5, 'rtt_ms', 40 + i % 100),
         'out', jsonb_build_object('mos_min', 4.1, 'mos_avg', 4.3, 'loss_pct', 0.4, 'jitter_ms', 8.2, 'rtt_ms', null)) END
     FROM (SELECT i, ?::timestamptz + (i * ?) * interval '1 millisecond' AS t FROM generate_series(0, ? - 1) AS i) s`,
    [customerId, empty, empty, empty, empty, empty, empty, from.toISOString(), stepMs, n],
  );
}

/**
 * One call row of the customer, written as it is (the dashboard and export suites): nothing linked, ended
 * normally by the far end, tel to tel; `fields` add to or override that (an `id` among them is kept).
 * Returns its id.
 */
export async function insertCallRow(db: Knex, customerId: string, fields: Record<string, unknown> = {}): Promise<string> {
  const empty = '00000000-0000-0000-0000-000000000000';
  const id = (fields.id as string | undefined) ?? randomUUID();
  await db('calls').insert({
    id,
    customer_id: customerId,
    owner_id: empty,
    flow_id: empty,
    activeflow_id: empty,
    master_call_id: empty,
    recording_id: empty,
    groupcall_id: empty,
    status: 'hangup',
    direction: 'incoming',
    hangup_by: 'remote',
    hangup_reason: 'normal',
    source: { type: 'tel', target: '+15550001111' },
    destination: { type: 'tel', target: '+15550002222' },
    ...fields,
  });
  return id;
}

/** A minimal RFC 4180 reader (quoted fields, doubled quotes, CRLF between records). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let f = '';
  let q = false;
  const endField = () => {
    row.push(f);
    f = '';
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (q) {
      if (ch === '"' && text[i + 1] === '"') {
        f += '"';
        i++;
      } else if (ch === '"') q = false;
      else f += ch;
    } else if (ch === '"') q = true;
    else if (ch === ',') endField();
    else if (ch === '\r' && text[i + 1] === '\n') {
      endField();
      rows.push(row);
      row = [];
      i++;
    } else f += ch;
  }
  if (f || row.length) {
    row.push(f);
    rows.push(row);
  }
  return rows;
}
