/**
 * Flow variables (spec: Variables): option text reads `${<key>}`; names starting with `svc.` are
 * system variables set by the runner and ignored when a client supplies them.
 */

/** Custom variable names: letters, digits, `_`, `.`, `-`; up to 128 characters. */
export const VARIABLE_NAME_RE = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
export const SYSTEM_PREFIX = 'svc.';

/** Limits on client-supplied variables (spec: Limits, POST /calls variables). */
export const VARIABLE_LIMITS = { maxKeys: 100, maxTotalBytes: 64 * 1024, maxValueBytes: 32 * 1024 } as const;

export function isSystemVariable(name: string): boolean {
  return name.startsWith(SYSTEM_PREFIX);
}

export type VariableLookup = (name: string) => string | undefined;

// substitute() and substituteDeep() (context-encoded) are in ./encoding.

/** True when the text refers to at least one variable. */
export function hasVariables(text: string): boolean {
  return /\$\{[^{}]*\}/.test(text);
}

export interface VariableProblem {
  field: string;
  message: string;
}

/**
 * Checks client-supplied variables (POST /activeflows, POST /calls): a flat string map within the
 * limits. `svc.` keys are dropped, not refused (voipbin ignores reserved keys).
 */
export function checkClientVariables(input: unknown, field = 'variables'): { variables: Record<string, string>; problems: VariableProblem[] } {
  const problems: VariableProblem[] = [];
  const variables: Record<string, string> = {};
  if (input === undefined || input === null) return { variables, problems };
  if (typeof input !== 'object' || Array.isArray(input)) {
    return { variables, problems: [{ field, message: 'must be an object of strings' }] };
  }
  const entries = Object.entries(input as Record<string, unknown>);
  if (entries.length > VARIABLE_LIMITS.maxKeys) problems.push({ field, message: `at most ${VARIABLE_LIMITS.maxKeys} keys` });
  let total = 0;
  for (const [k, v] of entries) {
    if (typeof v !== 'string') {
      problems.push({ field: `${field}.${k}`, message: 'must be a string' });
      continue;
    }
    if (!VARIABLE_NAME_RE.test(k)) {
      problems.push({ field: `${field}.${k}`, message: 'invalid variable name' });
      continue;
    }
    const size = Buffer.byteLength(v);
    if (size > VARIABLE_LIMITS.maxValueBytes) problems.push({ field: `${field}.${k}`, message: 'value over 32 KB' });
    total += size + Buffer.byteLength(k);
    if (!isSystemVariable(k)) variables[k] = v;
  }
  if (total > VARIABLE_LIMITS.maxTotalBytes) problems.push({ field, message: 'keys and values over 64 KB in total' });
  return { variables, problems };
}
