/**
 * Request parameters and list pages as Twilio's REST API has them: form-encoded bodies (a repeated
 * name is a list), `PageSize` (1..1000, default 50) and `Page` (0-based) in the query, RFC 2822 dates,
 * and the page envelope (`first_page_uri`, `next_page_uri`, `previous_page_uri`, `uri`, `page`,
 * `page_size`, `start`, `end` and the list under its own key).
 */
import type { Request } from 'express';
import { badParam } from './errors';

export type Params = Record<string, unknown>;

/** One value of a single-valued parameter; a repeated one is refused (20001). */
export function one(p: Params, name: string, max = 4096): string | undefined {
  const v = p[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badParam(`${name} must be given once`);
  if (v.length > max) throw badParam(`${name} is longer than ${max} characters`);
  return v;
}

/** Every value of a repeatable parameter (StatusCallbackEvent); a space-separated value counts as several, as on Twilio. */
export function many(p: Params, name: string): string[] {
  const v = p[name];
  const list = v === undefined ? [] : Array.isArray(v) ? v : [v];
  return list.flatMap((x) => (typeof x === 'string' ? x.split(/\s+/).filter(Boolean) : []));
}

export function oneOf<T extends string>(p: Params, name: string, allowed: readonly T[], fallback: T): T {
  const v = one(p, name, 64);
  if (v === undefined) return fallback;
  const hit = allowed.find((a) => a.toLowerCase() === v.toLowerCase());
  if (!hit) throw badParam(`${name} must be one of ${allowed.join(', ')}`);
  return hit;
}

export function bool(p: Params, name: string): boolean | undefined {
  const v = one(p, name, 8);
  if (v === undefined) return undefined;
  if (/^true$/i.test(v)) return true;
  if (/^false$/i.test(v)) return false;
  throw badParam(`${name} must be true or false`);
}

export function int(p: Params, name: string, min: number, max: number): number | undefined {
  const v = one(p, name, 16);
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v) || Number(v) < min || Number(v) > max) throw badParam(`${name} must be an integer from ${min} to ${max}`);
  return Number(v);
}

/** An absolute http(s) URL for Url, StatusCallback, VoiceUrl (the egress policy is checked by the caller). */
export function httpUrl(p: Params, name: string, code: number): string | undefined {
  const v = one(p, name, 4096);
  if (v === undefined || v === '') return undefined;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw badParam(`${name} is not a valid URL: ${v.slice(0, 200)}`, code);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw badParam(`${name} must be an http or https URL`, code);
  return v;
}

/** RFC 2822, as Twilio writes `date_created`: "Mon, 23 Nov 2026 16:16:36 +0000". */
export function rfc2822(d: Date | null | undefined): string | null {
  if (!d) return null;
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p2 = (n: number) => String(n).padStart(2, '0');
  return `${days[d.getUTCDay()]}, ${p2(d.getUTCDate())} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} +0000`;
}

export interface PageReq {
  page: number;
  pageSize: number;
  offset: number;
}

export function pageOf(query: Params): PageReq {
  const pageSize = int(query, 'PageSize', 1, 1000) ?? 50;
  const page = int(query, 'Page', 0, 1_000_000) ?? 0;
  return { page, pageSize, offset: page * pageSize };
}

/** The page envelope; `rows` holds up to pageSize + 1 rows (the extra one says there is a next page). */
export function pageJson<T>(req: Request, key: string, pr: PageReq, rows: T[]): Record<string, unknown> {
  const more = rows.length > pr.pageSize;
  const items = rows.slice(0, pr.pageSize);
  const path = `${req.baseUrl}${req.path}`;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(req.query)) if (typeof v === 'string' && k !== 'Page' && k !== 'PageSize' && k !== 'PageToken') q.set(k, v);
  const uriFor = (page: number) => {
    const u = new URLSearchParams(q);
    u.set('PageSize', String(pr.pageSize));
    u.set('Page', String(page));
    return `${path}?${u.toString()}`;
  };
  return {
    [key]: items,
    page: pr.page,
    page_size: pr.pageSize,
    start: pr.offset,
    end: pr.offset + Math.max(items.length - 1, 0),
    uri: uriFor(pr.page),
    first_page_uri: uriFor(0),
    next_page_uri: more ? uriFor(pr.page + 1) : null,
    previous_page_uri: pr.page > 0 ? uriFor(pr.page - 1) : null,
  };
}
