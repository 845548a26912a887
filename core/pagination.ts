/**
 * List pagination (spec conventions 5): `page_size` (default and maximum 100; out of range is clamped
 * like VoIPbin does) and `page_token`, a timestamp cursor. Lists run newest first by (tm_create, id);
 * the token carries both so rows with EQUAL tm_create are neither skipped nor repeated.
 * Token format: `<RFC 3339 with microseconds>_<uuid>` (a bare timestamp is accepted too).
 */
import type { Knex } from 'knex';
import { invalidParameter } from './errors';
import { isUuid } from './ids';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 100;

export interface PageParams {
  pageSize: number;
  pageToken: string;
}

export interface Page<T> {
  result: T[];
  next_page_token: string;
}

interface Cursor {
  /** epoch microseconds */
  us: number;
  id: string | null;
}

function usToIso(us: number): string {
  const ms = Math.floor(us / 1000);
  const frac = String(us % 1_000_000).padStart(6, '0');
  return new Date(ms).toISOString().slice(0, 19) + '.' + frac + 'Z';
}

export function encodePageToken(us: number, id: string): string {
  return `${usToIso(us)}_${id}`;
}

/** The timestamp part as a Postgres-parsable string plus the id, or null when malformed. */
export function decodePageToken(token: string): { ts: string; id: string | null } | null {
  const m = /^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.(\d{1,6}))?Z?)(?:_([0-9a-fA-F-]{36}))?$/.exec(token);
  if (!m) return null;
  if (m[3] !== undefined && !isUuid(m[3])) return null;
  const ts = m[1].replace(' ', 'T').replace(/Z?$/, 'Z');
  if (Number.isNaN(new Date(ts).getTime())) return null;
  return { ts, id: m[3] ?? null };
}

/** Parses `page_size` / `page_token` from a query object; throws INVALID_REQUEST_PARAMETER. */
export function parsePageQuery(query: Record<string, unknown>): PageParams {
  let pageSize = DEFAULT_PAGE_SIZE;
  const rawSize = query.page_size;
  if (rawSize !== undefined && rawSize !== '') {
    if (typeof rawSize !== 'string' || !/^-?\d{1,9}$/.test(rawSize)) {
      throw invalidParameter('page_size', 'page_size must be an integer');
    }
    const n = Number(rawSize);
    pageSize = n <= 0 || n > MAX_PAGE_SIZE ? MAX_PAGE_SIZE : n;
  }
  const rawToken = query.page_token;
  let pageToken = '';
  if (rawToken !== undefined && rawToken !== '') {
    if (typeof rawToken !== 'string' || !decodePageToken(rawToken)) {
      throw invalidParameter('page_token', 'page_token is not a valid cursor');
    }
    pageToken = rawToken;
  }
  return { pageSize, pageToken };
}

/**
 * Runs `qb` (already filtered, e.g. by customer and `tm_delete IS NULL`) one page at a time.
 * `table` qualifies the tm_create/id columns when the query joins.
 */
export async function paginate<Row extends { id: string }>(qb: Knex.QueryBuilder, params: PageParams, table?: string): Promise<{ rows: Row[]; nextPageToken: string }> {
  const col = (c: string) => (table ? `${table}.${c}` : c);
  const cursorUs: Knex.Raw = qb.client.raw(`(extract(epoch from ??) * 1000000)::bigint as __cursor_us`, [col('tm_create')]);
  const q = qb.clone();
  q.select(cursorUs);
  const cursor = params.pageToken ? decodePageToken(params.pageToken) : null;
  if (cursor) {
    if (cursor.id) q.whereRaw('(??, ??) < (?::timestamptz, ?::uuid)', [col('tm_create'), col('id'), cursor.ts, cursor.id]);
    else q.where(col('tm_create'), '<', cursor.ts);
  }
  q.orderBy([
    { column: col('tm_create'), order: 'desc' },
    { column: col('id'), order: 'desc' },
  ]).limit(params.pageSize + 1);
  const raw = (await q) as (Row & { __cursor_us?: number })[];
  const more = raw.length > params.pageSize;
  const page = more ? raw.slice(0, params.pageSize) : raw;
  const last = page[page.length - 1];
  const nextPageToken = more && last ? encodePageToken(Number(last.__cursor_us), last.id) : '';
  for (const r of page) delete r.__cursor_us;
  return { rows: page, nextPageToken };
}

export function toPage<Row, T>(p: { rows: Row[]; nextPageToken: string }, map: (r: Row) => T): Page<T> {
  return { result: p.rows.map(map), next_page_token: p.nextPageToken };
}

// Exposed for tests.
export const _cursorInternals = { usToIso } satisfies Record<string, unknown>;
export type { Cursor };
