// Ordered, multi-valued, case-insensitive SIP header collection.
// Each entry holds ONE header field value: comma-joined values of list headers are split at parse time
// (see LIST_HEADERS) so that Via/Route/Contact manipulation works entry by entry.

/** RFC 3261 7.3.3 and later RFCs: compact form -> full name. */
export const COMPACT_FORMS: Readonly<Record<string, string>> = {
  i: 'Call-ID',
  m: 'Contact',
  e: 'Content-Encoding',
  l: 'Content-Length',
  c: 'Content-Type',
  f: 'From',
  s: 'Subject',
  k: 'Supported',
  t: 'To',
  v: 'Via',
  r: 'Refer-To',
  b: 'Referred-By',
  o: 'Event',
  u: 'Allow-Events',
  x: 'Session-Expires',
  y: 'Identity',
  a: 'Accept-Contact',
  j: 'Reject-Contact',
  d: 'Request-Disposition',
};

const KNOWN = [
  'Accept',
  'Accept-Contact',
  'Accept-Encoding',
  'Accept-Language',
  'Alert-Info',
  'Allow',
  'Allow-Events',
  'Authentication-Info',
  'Authorization',
  'Call-ID',
  'Call-Info',
  'Contact',
  'Content-Disposition',
  'Content-Encoding',
  'Content-Language',
  'Content-Length',
  'Content-Type',
  'CSeq',
  'Date',
  'Error-Info',
  'Event',
  'Expires',
  'From',
  'Identity',
  'In-Reply-To',
  'Max-Forwards',
  'Min-Expires',
  'Min-SE',
  'MIME-Version',
  'Organization',
  'P-Asserted-Identity',
  'P-Preferred-Identity',
  'Path',
  'Priority',
  'Privacy',
  'Proxy-Authenticate',
  'Proxy-Authorization',
  'Proxy-Require',
  'RAck',
  'Reason',
  'Record-Route',
  'Refer-To',
  'Referred-By',
  'Reject-Contact',
  'Replaces',
  'Reply-To',
  'Request-Disposition',
  'Require',
  'Retry-After',
  'Route',
  'RSeq',
  'Server',
  'Service-Route',
  'Session-Expires',
  'SIP-ETag',
  'SIP-If-Match',
  'Subject',
  'Subscription-State',
  'Supported',
  'Timestamp',
  'To',
  'Unsupported',
  'User-Agent',
  'Via',
  'Warning',
  'WWW-Authenticate',
];
const CANONICAL = new Map(KNOWN.map((n) => [n.toLowerCase(), n]));

/** Headers whose values are comma-separated lists (RFC 3261 7.3.1); others are never split. */
export const LIST_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'accept-encoding',
  'accept-language',
  'alert-info',
  'allow',
  'allow-events',
  'call-info',
  'contact',
  'content-encoding',
  'content-language',
  'error-info',
  'in-reply-to',
  'path',
  'proxy-require',
  'record-route',
  'require',
  'route',
  'service-route',
  'supported',
  'unsupported',
  'via',
  'warning',
  'p-asserted-identity',
  'p-preferred-identity',
  'reason',
]);

/** Canonical spelling of a header name: compact forms expanded, known names in RFC case, others as given. */
export function canonicalName(name: string): string {
  const lower = name.toLowerCase();
  if (lower.length === 1 && COMPACT_FORMS[lower]) return COMPACT_FORMS[lower];
  return CANONICAL.get(lower) ?? name;
}

/**
 * The lookup key of a header name as given (canonical, lower case), remembered for the first
 * MEMO_MAX spellings seen: the code's own names and the usual wire names then cost one map read
 * instead of two lower-casings and a map read per header access. Names past the bound (a peer
 * inventing header names) are computed each time, never remembered.
 */
const KEY_MEMO = new Map<string, string>();
const CANONICAL_MEMO = new Map<string, string>();
const MEMO_MAX = 1024;

export function headerKey(name: string): string {
  let k = KEY_MEMO.get(name);
  if (k === undefined) {
    k = canonicalName(name).toLowerCase();
    if (KEY_MEMO.size < MEMO_MAX) KEY_MEMO.set(name, k);
  }
  return k;
}

/** canonicalName, remembered like headerKey (the parser's path: every header line of every message). */
export function canonicalNameMemo(name: string): string {
  let c = CANONICAL_MEMO.get(name);
  if (c === undefined) {
    c = canonicalName(name);
    if (CANONICAL_MEMO.size < MEMO_MAX) CANONICAL_MEMO.set(name, c);
  }
  return c;
}

/**
 * Split a header value on commas that are outside quoted strings and angle brackets.
 * Empty elements are dropped (RFC 3261 allows "a, , b" in some lists; we keep it tolerant).
 */
export function splitList(value: string): string[] {
  const out: string[] = [];
  let start = 0;
  let inQuote = false;
  let angle = 0;
  for (let i = 0; i < value.length; i++) {
    const ch = value.charCodeAt(i);
    if (inQuote) {
      if (ch === 0x5c)
        i++; // backslash escape inside quoted-string
      else if (ch === 0x22) inQuote = false;
    } else if (ch === 0x22) inQuote = true;
    else if (ch === 0x3c) angle++;
    else if (ch === 0x3e) {
      if (angle > 0) angle--;
    } else if (ch === 0x2c && angle === 0) {
      const part = value.slice(start, i).trim();
      if (part) out.push(part);
      start = i + 1;
    }
  }
  const last = value.slice(start).trim();
  if (last) out.push(last);
  return out;
}

export interface HeaderEntry {
  name: string;
  value: string;
}

export class Headers implements Iterable<[string, string]> {
  private list: { name: string; key: string; value: string }[] = [];

  constructor(init?: Iterable<[string, string]> | Record<string, string | string[]>) {
    if (!init) return;
    if (Symbol.iterator in (init as object)) {
      for (const [n, v] of init as Iterable<[string, string]>) this.append(n, v);
    } else {
      for (const [n, v] of Object.entries(init as Record<string, string | string[]>)) this.append(n, v);
    }
  }

  /** Number of header field values (entries). */
  get size(): number {
    return this.list.length;
  }

  /** First value of the header, or undefined. Name is case-insensitive; compact forms accepted. */
  get(name: string): string | undefined {
    const key = headerKey(name);
    for (const e of this.list) if (e.key === key) return e.value;
    return undefined;
  }

  /** All values of the header, in order. */
  getAll(name: string): string[] {
    const key = headerKey(name);
    const out: string[] = [];
    for (const e of this.list) if (e.key === key) out.push(e.value);
    return out;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** Number of values of the header. */
  count(name: string): number {
    const key = headerKey(name);
    let n = 0;
    for (const e of this.list) if (e.key === key) n++;
    return n;
  }

  /** Replace all values of a header, keeping the position of the first existing entry. */
  set(name: string, value: string | string[]): this {
    const cname = canonicalName(name);
    const key = cname.toLowerCase();
    const values = Array.isArray(value) ? value : [value];
    const idx = this.list.findIndex((e) => e.key === key);
    this.list = this.list.filter((e) => e.key !== key);
    const entries = values.map((v) => ({ name: cname, key, value: String(v) }));
    if (idx < 0) this.list.push(...entries);
    else this.list.splice(Math.min(idx, this.list.length), 0, ...entries);
    return this;
  }

  /** Add value(s) after the last entry (list headers given comma-joined are split). */
  append(name: string, value: string | string[]): this {
    const cname = canonicalName(name);
    const key = cname.toLowerCase();
    for (const v of Array.isArray(value) ? value : [value]) this.list.push({ name: cname, key, value: String(v) });
    return this;
  }

  /** Insert value(s) before the first entry of that header (or at the top): used for Via and Record-Route. */
  prepend(name: string, value: string | string[]): this {
    const cname = canonicalName(name);
    const key = cname.toLowerCase();
    const values = (Array.isArray(value) ? value : [value]).map((v) => ({ name: cname, key, value: String(v) }));
    const idx = this.list.findIndex((e) => e.key === key);
    this.list.splice(idx < 0 ? 0 : idx, 0, ...values);
    return this;
  }

  /** Remove every value of a header; returns how many were removed. */
  delete(name: string): number {
    const key = canonicalName(name).toLowerCase();
    const before = this.list.length;
    this.list = this.list.filter((e) => e.key !== key);
    return before - this.list.length;
  }

  /** Remove and return the first value of a header (e.g. the top Via of a response being forwarded). */
  shift(name: string): string | undefined {
    const key = canonicalName(name).toLowerCase();
    const idx = this.list.findIndex((e) => e.key === key);
    if (idx < 0) return undefined;
    return this.list.splice(idx, 1)[0].value;
  }

  /** Replace the first value of a header (adds it if absent). */
  replaceFirst(name: string, value: string): this {
    const key = canonicalName(name).toLowerCase();
    const e = this.list.find((x) => x.key === key);
    if (e) e.value = value;
    else this.append(name, value);
    return this;
  }

  /** Entries as [name, value] in wire order. */
  *[Symbol.iterator](): Iterator<[string, string]> {
    for (const e of this.list) yield [e.name, e.value];
  }

  entries(): HeaderEntry[] {
    return this.list.map((e) => ({ name: e.name, value: e.value }));
  }

  clone(): Headers {
    const h = new Headers();
    h.list = this.list.map((e) => ({ ...e }));
    return h;
  }

  /** Internal: add an entry exactly as parsed (name already canonical). */
  pushRaw(name: string, value: string): void {
    this.list.push({ name, key: headerKey(name), value });
  }
}
