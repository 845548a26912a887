/**
 * Splits a document into chunks for retrieval: paragraphs packed up to ~maxChars, long paragraphs
 * cut at sentence ends, so a chunk is a few self-contained sentences.
 */
export function chunkText(text: string, maxChars = 800): string[] {
  const paras = text
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  const pieces: string[] = [];
  for (const p of paras) {
    if (p.length <= maxChars) {
      pieces.push(p);
      continue;
    }
    let cur = '';
    for (const s of p.match(/[^.!?]+[.!?]*\s*/g) ?? [p]) {
      if (cur && cur.length + s.length > maxChars) {
        pieces.push(cur.trim());
        cur = '';
      }
      // a single sentence longer than the limit is cut hard
      for (let i = 0; i < s.length; i += maxChars) cur += s.slice(i, i + maxChars);
    }
    if (cur.trim()) pieces.push(cur.trim());
  }
  const chunks: string[] = [];
  let cur = '';
  for (const p of pieces) {
    if (cur && cur.length + p.length + 1 > maxChars) {
      chunks.push(cur);
      cur = '';
    }
    cur = cur ? `${cur}\n${p}` : p;
  }
  if (cur) chunks.push(cur);
  return chunks;
}

/** Visible text of an HTML page (scripts, styles and tags dropped, entities decoded). */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|noscript)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<\/(p|div|h[1-6]|li|tr|section|article|br)\s*>/gi, '\n\n')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/[ \t]+/g, ' ');
}
