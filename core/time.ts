/**
 * Timestamp formats of the spec (conventions 3): most records use `YYYY-MM-DD HH:MM:SS.ffffff` with
 * `9999-01-01 00:00:00.000000` for "has not happened"; some (outbound configs, flows, calls, contacts)
 * use RFC 3339 or null; extensions use an empty string. Resources that answer RFC 3339 where the
 * reference types a plain string (contact cases and their notes) spell "has not happened" as the
 * sentinel in RFC 3339.
 */
export const TM_SENTINEL = '9999-01-01 00:00:00.000000';
export const TM_SENTINEL_RFC3339 = '9999-01-01T00:00:00.000000Z';

function micro(d: Date): string {
  // JS dates carry milliseconds; the spec prints microseconds.
  return d.toISOString().slice(0, 23) + '000';
}

/** `YYYY-MM-DD HH:MM:SS.ffffff`, or the 9999 sentinel when unset. */
export function formatLegacy(d: Date | null | undefined): string {
  if (!d) return TM_SENTINEL;
  return micro(d).replace('T', ' ');
}

/** RFC 3339 with microseconds (`2026-01-15T09:30:00.123000Z`), or null when unset. */
export function formatRfc3339(d: Date | null | undefined): string | null {
  if (!d) return null;
  return micro(d) + 'Z';
}

/** RFC 3339 with microseconds, or the 9999 sentinel in RFC 3339 when unset. */
export function formatRfc3339OrSentinel(d: Date | null | undefined): string {
  return formatRfc3339(d) ?? TM_SENTINEL_RFC3339;
}

/** Empty string when unset (extensions). */
export function formatLegacyOrEmpty(d: Date | null | undefined): string {
  return d ? formatLegacy(d) : '';
}

/** Parses both formats above (and any ISO 8601 string); null on anything else. */
export function parseTimestamp(s: string): Date | null {
  if (typeof s !== 'string' || s.length < 10 || s.length > 40) return null;
  const iso = /^\d{4}-\d{2}-\d{2} /.test(s) ? s.replace(' ', 'T') + (/[zZ]|[+-]\d{2}:?\d{2}$/.test(s) ? '' : 'Z') : s;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?([zZ]|[+-]\d{2}:?\d{2})$/.test(iso)) return null;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}
