/**
 * Byte ranges of a stored file (RFC 9110 §14), for downloads an <audio> element seeks in: the range a
 * `Range` header asks for, read from the store as just those bytes. One helper for every file answer
 * that takes Range (control-api/customer-file.ts: eval call audio, recording files).
 */
import { Transform, type Readable } from 'node:stream';

/** Bytes `start` to `end` of a file, both included. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * What `header` asks of a file of `size` bytes: one range (clipped to the file), 'unsatisfiable' (416:
 * it starts past the end, a zero suffix, an empty file), or null: no Range, or one this server does not
 * serve as a range and answers whole (RFC 9110 lets a server ignore Range): another unit, several
 * ranges, a malformed one (a last byte before the first included).
 */
export function requestedRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  if (header === undefined) return null;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (!Number.isSafeInteger(suffix)) return null;
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const last = m[2] === '' ? Infinity : Number(m[2]);
  if (!Number.isSafeInteger(start) || last < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(last, size - 1) };
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
