/**
 * Headers of every answer that carries a customer's bytes (storage files, the agent's files,
 * recordings, call pcaps): the browser must never run them in the platform's origin, where the
 * console's CSP would trust them (docs/security.md "Customer files").
 *   - Content-Disposition: attachment, the name as an ASCII fallback `filename="..."` and the exact
 *     name in `filename*=UTF-8''...` (RFC 6266, RFC 8187/5987);
 *   - X-Content-Type-Options: nosniff, and Content-Security-Policy: default-src 'none'; sandbox (a
 *     document opened anyway gets a unique origin, no script, no fetches);
 *   - Content-Type: the stored type when it is a passive one (audio, video, raster images, text/plain,
 *     csv, pdf, json, zip), otherwise application/octet-stream: html, svg, xml and script types are
 *     never sent with their own type.
 * An <audio> or <video> element plays such an answer all the same (disposition and CSP do not apply
 * to media subresources).
 */
import type { Readable } from 'node:stream';
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { ApiError } from '../core/errors';
import { askedRange, contentRange, type RangeAsk, type RangedFile } from '../core/storage/range';

export const CUSTOMER_FILE_CSP = "default-src 'none'; sandbox";

const PASSIVE = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/bmp',
  'text/plain',
  'text/csv',
  'application/pdf',
  'application/json',
  'application/zip',
  'application/octet-stream',
]);

/** The type a customer file is sent with: its own when passive, else application/octet-stream. */
export function passiveContentType(stored: string): string {
  const base = stored.split(';', 1)[0]!.trim().toLowerCase();
  if (/^(audio|video)\/[a-z0-9][a-z0-9.+-]{0,100}$/.test(base) || PASSIVE.has(base)) return base;
  return 'application/octet-stream';
}

/** RFC 8187 attr-char: ALPHA / DIGIT / "!" / "#" / "$" / "&" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~". */
function extValue(name: string): string {
  return encodeURIComponent(name).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

/**
 * `attachment; filename="<ascii>"; filename*=UTF-8''<exact>`. The ASCII fallback keeps printable
 * ASCII except `"`, `\` and `%` (some browsers decode %xx there), which become `_`, as does anything
 * else; an empty name becomes `download`.
 */
export function attachmentDisposition(filename: string): string {
  const name = filename.normalize('NFC').replace(/[\u0000-\u001f\u007f]/g, '') || 'download'; // eslint-disable-line no-control-regex -- matches control characters on purpose, to remove them
  const ascii = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${extValue(name)}`;
}

/** Sets the status and headers of a customer file answer; the caller writes the body. */
export function customerFileHeaders(res: Response, f: { filename: string; contentType: string; size?: number }): void {
  res.status(200).set({
    'Content-Type': passiveContentType(f.contentType),
    'Content-Disposition': attachmentDisposition(f.filename),
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': CUSTOMER_FILE_CSP,
    ...(f.size !== undefined ? { 'Content-Length': String(f.size) } : {}),
  });
}

/**
 * Answers with a customer file: its headers (customerFileHeaders), then its bytes piped from `obj`;
 * resolves when the answer is written or the client left (the source is then destroyed: a file
 * descriptor or an S3 GET is not left open), rejects on an error of the source.
 */
export async function sendCustomerFile(res: Response, f: { filename: string; contentType: string }, obj: { stream: Readable; size?: number }): Promise<void> {
  customerFileHeaders(res, { ...f, size: obj.size });
  await pipeBody(res, obj.stream);
}

/**
 * Answers a GET of a customer file that an <audio> element may seek in (RFC 9110 §14): `Accept-Ranges:
 * bytes`; one byte range asked (`Range`, core/storage/range.ts): 206 with `Content-Range` and only those
 * bytes, read from the store in ONE read that also says the file's size (`open(ask)`); a range starting
 * past the end: 416 RANGE_NOT_SATISFIABLE in the error envelope with `Content-Range: bytes *\/<size>`; no
 * Range, one served whole (several ranges, another unit, malformed) or an `If-Range` (the file has no
 * validator to match): 200 with the whole file. `open` resolves null when the file is absent: so does
 * this, having sent nothing.
 */
export async function sendCustomerFileRanges(req: Request, res: Response, f: { filename: string; contentType: string }, open: (range?: RangeAsk) => Promise<RangedFile | null>): Promise<boolean> {
  const ask = req.headers['if-range'] === undefined ? askedRange(req.headers.range) : null;
  const got = await open(ask ?? undefined);
  if (!got) return false;
  res.set('Accept-Ranges', 'bytes');
  const range = got.range;
  if (range === undefined) {
    await sendCustomerFile(res, f, got);
    return true;
  }
  if (range === 'unsatisfiable') {
    got.stream.destroy();
    throw new ApiError('RANGE_NOT_SATISFIABLE', `the range ${req.headers.range} is not within the file's ${got.size} bytes`, { headers: { 'Content-Range': contentRange(null, got.size) } });
  }
  customerFileHeaders(res, { ...f, size: range.end - range.start + 1 });
  res.status(206).set('Content-Range', contentRange(range, got.size));
  await pipeBody(res, got.stream);
  return true;
}

async function pipeBody(res: Response, stream: Readable): Promise<void> {
  try {
    await pipeline(stream, res);
  } catch (e) {
    // the client going away is not an error of ours
    if ((e as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE' && !res.writableFinished) return;
    throw e;
  }
}
