/**
 * GET /calls/export (our extension, docs/observability.md): the caller's call detail records for a
 * time range, streamed as CSV (RFC 4180) or JSON lines. Read from Postgres in keyset batches
 * (core/calls/cdr.ts) and written with the response's backpressure, so memory stays at one batch
 * whatever the range holds; a client that goes away stops the reading at the next batch.
 * This file sorts before calls.ts, so /calls/export is matched before /calls/:id.
 */
import { z } from 'zod';
import type { Response } from 'express';
import { defineRoute } from '../route';
import { invalidParameter } from '../../core/errors';
import { CDR_DIRECTIONS, CDR_FIELDS, CDR_STATUSES, CSV_HEADER, cdrBatches, csvLine, jsonLine } from '../../core/calls/cdr';
import { platformMetrics } from '../../core/metrics';

/** The longest range one export may cover. */
export const MAX_EXPORT_DAYS = 31;

/** ISO 8601: a date (midnight UTC) or a date-time with Z or an offset (a local time is ambiguous). */
export const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/;
export const instant = () => z.string().max(40).regex(ISO_8601, 'must be ISO 8601: YYYY-MM-DD or YYYY-MM-DDThh:mm[:ss[.fff]] with Z or an offset').refine(realDate, 'is not a real date');

/** Date.parse rolls 2026-02-30 over to March: the calendar date must come back unchanged. */
export function realDate(v: string): boolean {
  const [y, m, d] = v.slice(0, 10).split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  return !Number.isNaN(Date.parse(v)) && day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d;
}

export const exportQuery = z.object({
  start: instant().describe('first tm_create included (ISO 8601)'),
  end: instant().describe(`tm_create before this (ISO 8601); at most ${MAX_EXPORT_DAYS} days after start`),
  format: z.enum(['csv', 'jsonl']).optional().describe('default csv'),
  direction: z.enum(CDR_DIRECTIONS).optional(),
  status: z.enum(CDR_STATUSES).optional(),
  address: z.string().min(1).max(255).optional().describe('calls whose source or destination target is exactly this (number, extension, SIP URI)'),
  mos_below: z
    .string()
    .regex(/^\d(?:\.\d{1,3})?$/, 'must be a MOS between 1 and 5, e.g. 3.5')
    .refine((v) => Number(v) >= 1 && Number(v) <= 5, 'must be a MOS between 1 and 5, e.g. 3.5')
    .optional()
    .describe('calls whose lowest MOS sample in either direction (quality_in_mos_min, quality_out_mos_min) is below this; calls without quality are left out'),
});

const cdrRecord = z.object(Object.fromEntries(CDR_FIELDS.map((f) => [f, z.union([z.string(), z.number(), z.null()])])));

/** Resolves when `res` can take more, or when the client has gone (at once if it already has). */
function writable(res: Response, gone: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (gone() || res.destroyed) return resolve();
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

export const routes = [
  defineRoute({
    method: 'get',
    path: '/calls/export',
    tag: 'Call',
    summary: 'Export call detail records (CSV or JSON lines, streamed)',
    description:
      `Our extension. The caller's calls created in [start, end), oldest first, one record per call with its billing amount (micros) and its quality summary (quality_* columns, empty / null without media). ` +
      `format=csv: RFC 4180 with a header row; every piece of a text that a spreadsheet could run as a formula (starting with = + - @ TAB or CR, at the start or after , ; TAB | or a line break) gets an apostrophe first (formula injection). ` +
      `format=jsonl: one JSON object per line. The range may span at most ${MAX_EXPORT_DAYS} days. Errors are the JSON envelope.`,
    permission: 'manager',
    query: exportQuery,
    response: cdrRecord.describe('one record (a CSV row or a JSON line)'),
    responseContentTypes: ['text/csv', 'application/x-ndjson'],
    handler: async ({ ctx, auth, query, req, res }) => {
      const start = new Date(query.start);
      const end = new Date(query.end);
      if (end.getTime() <= start.getTime()) throw invalidParameter('end', 'end must be after start');
      if (end.getTime() - start.getTime() > MAX_EXPORT_DAYS * 86_400_000) {
        throw invalidParameter('end', `the range may span at most ${MAX_EXPORT_DAYS} days: export longer periods in parts`);
      }
      const format = query.format ?? 'csv';
      const batches = cdrBatches(ctx.db, {
        customerId: auth.customerId,
        start,
        end,
        direction: query.direction,
        status: query.status,
        address: query.address,
        mosBelow: query.mos_below === undefined ? undefined : Number(query.mos_below),
      });
      // Read the first batch before answering, so a database failure is still an error envelope.
      let next = await batches.next();
      let closed = false;
      res.on('close', () => (closed = true));
      const stamp = start.toISOString().slice(0, 10);
      res.status(200);
      res.setHeader('Content-Type', format === 'csv' ? 'text/csv; charset=utf-8; header=present' : 'application/x-ndjson; charset=utf-8');
      res.setHeader('Content-Disposition', `attachment; filename="calls-${stamp}.${format}"`);
      res.setHeader('Cache-Control', 'no-store');
      const rows = platformMetrics.cdrExportRows.labels(format);
      platformMetrics.cdrExportsActive.inc();
      try {
        if (format === 'csv' && !res.write(CSV_HEADER)) await writable(res, () => closed);
        while (!next.done && !closed) {
          let chunk = '';
          for (const c of next.value) chunk += format === 'csv' ? csvLine(c) : jsonLine(c);
          rows.inc(next.value.length);
          if (!res.write(chunk)) await writable(res, () => closed);
          if (closed) break;
          next = await batches.next();
        }
        if (closed) {
          await batches.return(undefined);
          req.log.info({ customer_id: auth.customerId }, 'call export stopped: the client went away');
          return;
        }
        res.end();
      } catch (err) {
        // The status line is gone: cut the response so the client sees an incomplete transfer.
        req.log.error({ err }, 'call export failed mid-stream');
        res.destroy();
      } finally {
        platformMetrics.cdrExportsActive.dec();
      }
    },
  }),
];
