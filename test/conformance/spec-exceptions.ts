/**
 * Where the platform's API spec (which governs) and the reference document (`reference/`)
 * disagree, the reference's schemas are read through these exceptions, each with the spec's sentence.
 */
type Json = Record<string, unknown>;

export interface SpecException {
  /** The spec's own words. */
  spec: string;
  /** What the conformance check accepts because of it. */
  effect: string;
}

export const SPEC_EXCEPTIONS: SpecException[] = [
  {
    spec: 'Timestamps are UTC. Most records use `YYYY-MM-DD HH:MM:SS.ffffff`; some responses use RFC 3339 (`...Z`) or null for the same fields. [...] Extensions use an empty string instead. Flows, calls and contacts return null.',
    effect: 'a `date-time` string may also be `YYYY-MM-DD HH:MM:SS[.ffffff]` or empty, and every `tm_*` field may be null.',
  },
];

const SPEC_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** The `date-time` format as the spec has it. */
export function specDateTime(value: string): boolean {
  return value === '' || SPEC_TIMESTAMP.test(value) || (RFC3339.test(value) && !Number.isNaN(Date.parse(value)));
}

/** Marks every `tm_*` property schema of the document nullable (in place). */
export function applySpecExceptions(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(applySpecExceptions);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const obj = node as Json;
  const props = obj.properties;
  if (props && typeof props === 'object' && !Array.isArray(props)) {
    for (const [name, schema] of Object.entries(props as Json)) {
      if (/^tm_/.test(name) && schema && typeof schema === 'object' && 'type' in schema) (schema as Json).nullable = true;
    }
  }
  for (const v of Object.values(obj)) applySpecExceptions(v);
}
