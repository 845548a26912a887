/**
 * A value parsed from JSON (an LLM's tool arguments, a flow option, a carrier's answer) as text:
 * strings as they are, numbers and booleans by String, objects and arrays as JSON (never
 * "[object Object]"), undefined and null as `empty`.
 */
export function jsonText(v: unknown, empty = ''): string {
  if (v === undefined || v === null) return empty;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v) ?? empty;
}
