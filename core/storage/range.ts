/**
 * Byte ranges of a stored file (RFC 9110 §14), for downloads an <audio> element seeks in: the range a
 * `Range` header asks for, read from the store as just those bytes in ONE read that also says the file's
 * size (`RangeAsk`: the range as asked, before the size is known; a bucket answers it 206 with the size in
 * Content-Range). One helper for every file answer that takes Range (control-api/customer-file.ts: eval
 * call audio, recording files).
 */
import fs from 'node:fs';
import { Readable, Transform } from 'node:stream';

/** Bytes `start` to `end` of a file, both included. */
export interface ByteRange {
  start: number;
  end: number;
}

/** One range as a Range header asks it, the file's size unknown: bytes `start` to `last` (null: to the end), or the last `suffix` bytes. */
export type RangeAsk = { start: number; last: number | null } | { suffix: number };

/** A file read for an answer: its whole size, its bytes (of `range` when one was asked: 'unsatisfiable' has none). */
export interface RangedFile {
  size: number;
  stream: Readable;
  range?: ByteRange | 'unsatisfiable';
}

/**
 * The one range `header` asks, or null: no Range, or one this server does not serve as a range and
 * answers whole (RFC 9110 lets a server ignore Range): another unit, several ranges, a malformed one (a
 * last byte before the first included).
 */
export function askedRange(header: string | undefined): RangeAsk | null {
  if (header === undefined) return null;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    return Number.isSafeInteger(suffix) ? { suffix } : null;
  }
  const start = Number(m[1]);
  const last = m[2] === '' ? null : Number(m[2]);
  if (!Number.isSafeInteger(start) || (last !== null && last < start)) return null;
  return { start, last };
}

/** `ask` of a file of `size` bytes: clipped to the file, or 'unsatisfiable' (416: it starts past the end, a zero suffix, an empty file). */
export function resolveRange(ask: RangeAsk, size: number): ByteRange | 'unsatisfiable' {
  if ('suffix' in ask) return ask.suffix === 0 || size === 0 ? 'unsatisfiable' : { start: Math.max(0, size - ask.suffix), end: size - 1 };
  if (ask.start >= size) return 'unsatisfiable';
  return { start: ask.start, end: Math.min(ask.last ?? Infinity, size - 1) };
}

/** What `header` asks of a file of `size` bytes (askedRange, then resolveRange). */
export function requestedRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  const ask = askedRange(header);
  return ask && resolveRange(ask, size);
}

/** The Range header asking `ask` of a store. */
export function rangeHeader(ask: RangeAsk): string {
  return 'suffix' in ask ? `bytes=-${ask.suffix}` : `bytes=${ask.start}-${ask.last ?? ''}`;
}

/** A local file of `size` bytes (stat already read), as `ask` asks it: one stream of just those bytes. */
export function localRanged(file: string, size: number, ask: RangeAsk | undefined): RangedFile {
  if (!ask) return { size, stream: fs.createReadStream(file) };
  const range = resolveRange(ask, size);
  if (range === 'unsatisfiable') return { size, range, stream: Readable.from([]) };
  return { size, range, stream: fs.createReadStream(file, { start: range.start, end: range.end }) };
}

/** `Content-Range` of a range of a file of `size` bytes; of no range, the 416's `bytes *\/size`. */
export function contentRange(range: ByteRange | null, size: number): string {
  return range ? `bytes ${range.start}-${range.end}/${size}` : `bytes */${size}`;
}

/**
 * The bytes of `range` out of a stream of the whole file (a store that cannot read a range itself): the
 * bytes before it are dropped, and the source is destroyed once the range has been passed on.
 */
export function sliceStream(source: Readable, range: ByteRange): Readable {
  let pos = 0;
  const out = new Transform({
    transform(chunk: Buffer, _enc, done) {
      const from = Math.max(0, range.start - pos);
      const to = Math.min(chunk.length, range.end + 1 - pos);
      pos += chunk.length;
      if (to > from) this.push(chunk.subarray(from, to));
      if (pos > range.end) {
        this.push(null);
        source.unpipe(out);
        source.destroy();
      }
      done();
    },
  });
  source.on('error', (err) => out.destroy(err));
  return source.pipe(out);
}
