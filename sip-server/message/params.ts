// Generic ";name=value" parameter lists (URI params, header params) and small grammar helpers.

/** Ordered parameters; names are lower-cased (they are case-insensitive), a flag parameter has value null. */
export type Params = Record<string, string | null>;

export const TOKEN_RE = /^[A-Za-z0-9\-.!%*_+`'~]+$/;

export function isToken(s: string): boolean {
  return TOKEN_RE.test(s);
}

/**
 * Parse ";a=b;c;d="x;y"" (leading ';' optional). Returns null on a syntax error
 * (unterminated quote, empty name, bad characters in a name).
 */
export function parseParams(s: string, sep = ';'): Params | null {
  const out: Params = {};
  let i = 0;
  const n = s.length;
  while (i < n) {
    while (i < n && (s[i] === ' ' || s[i] === '\t')) i++;
    if (s[i] === sep) i++;
    while (i < n && (s[i] === ' ' || s[i] === '\t')) i++;
    if (i >= n) break;
    let j = i;
    while (j < n && s[j] !== '=' && s[j] !== sep && s[j] !== ' ' && s[j] !== '\t') j++;
    const name = s.slice(i, j).toLowerCase();
    if (!name) return null;
    i = j;
    while (i < n && (s[i] === ' ' || s[i] === '\t')) i++;
    let value: string | null = null;
    if (s[i] === '=') {
      i++;
      while (i < n && (s[i] === ' ' || s[i] === '\t')) i++;
      if (s[i] === '"') {
        const end = endOfQuoted(s, i);
        if (end < 0) return null;
        value = s.slice(i, end + 1);
        i = end + 1;
      } else {
        j = i;
        while (j < n && s[j] !== sep && s[j] !== ' ' && s[j] !== '\t') j++;
        value = s.slice(i, j);
        i = j;
      }
      while (i < n && (s[i] === ' ' || s[i] === '\t')) i++;
    }
    if (i < n && s[i] !== sep) return null;
    out[name] = value;
  }
  return out;
}

export function formatParams(p: Params, sep = ';'): string {
  let s = '';
  for (const [k, v] of Object.entries(p)) s += v === null ? `${sep}${k}` : `${sep}${k}=${v}`;
  return s;
}

/** Index of the closing quote of a quoted-string starting at `start` (which holds '"'), or -1. */
export function endOfQuoted(s: string, start: number): number {
  for (let i = start + 1; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') i++;
    else if (c === '"') return i;
  }
  return -1;
}

/** Remove surrounding quotes and backslash escapes from a quoted-string; other strings are returned as is. */
export function unquote(s: string): string {
  if (s.length >= 2 && s[0] === '"' && s[s.length - 1] === '"') return s.slice(1, -1).replace(/\\(.)/g, '$1');
  return s;
}

export function quote(s: string): string {
  return `"${s.replace(/(["\\])/g, '\\$1')}"`;
}
