/**
 * The one CSV cell writer of the platform (every CSV the platform writes goes through it: the CDR
 * export, core/calls/cdr.ts). RFC 4180 quoting, and CSV injection neutralised (OWASP "CSV
 * Injection"): a spreadsheet runs a cell as a formula when it begins with = + - @ (or TAB / CR,
 * which some strip first). A cell is not always split where we split it: a file re-imported with
 * another separator (`;`, TAB, `,`, `|`) or with line breaks kept splits a value of ours into
 * several cells. So an apostrophe (which the spreadsheet shows as "this is text" and hides) is put
 * before every piece that would start a formula: at the start of the value and after each of those
 * separators, spaces between them and the formula character included.
 */

/** Where a spreadsheet may start a new cell inside our value, when it splits on another separator. */
const PIECE_START = /(^|[,;\t\r\n|])( *)(?=[=+\-@\t\r])/g;

/** `text` with an apostrophe before every piece of it that a spreadsheet would take for a formula. */
export function defuseFormulas(text: string): string {
  return text.replace(PIECE_START, (_m, sep: string, spaces: string) => `${sep}'${spaces}`);
}

/**
 * One CSV field: null is empty, a number as it is, a text defused (defuseFormulas) and quoted when it
 * holds a comma, quote, CR or LF (quotes doubled) or a semicolon or TAB (so that a reader splitting
 * on those keeps it whole too).
 */
export function csvCell(v: string | number | null): string {
  if (v === null) return '';
  if (typeof v === 'number') return String(v);
  const s = defuseFormulas(v);
  return /[",;\t\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One CSV record (cells joined by commas, CRLF ended). */
export function csvRow(cells: readonly (string | number | null)[]): string {
  let out = '';
  for (let i = 0; i < cells.length; i++) out += (i ? ',' : '') + csvCell(cells[i]!);
  return out + '\r\n';
}
