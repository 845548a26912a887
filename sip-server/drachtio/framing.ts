/**
 * drachtio wire framing: every message is `<length>#<payload>` where <length> is the decimal
 * count of BYTES of the UTF-8 payload (drachtio-srf writes Buffer.byteLength, drachtio-server
 * counts std::string bytes). There is no separator between frames.
 */

/** drachtio-server refuses a length specifier of 6 or more digits; we accept up to 7 (lenient). */
const MAX_LENGTH_DIGITS = 7;
const HASH = 0x23;

export class FramingError extends Error {}

export function encodeFrame(payload: string): Buffer {
  const body = Buffer.from(payload, 'utf8');
  return Buffer.concat([Buffer.from(`${body.length}#`, 'latin1'), body]);
}

/**
 * Incremental decoder: push() raw socket chunks, get back every complete payload.
 * Throws FramingError on a malformed length specifier; the connection must then be closed
 * (what drachtio-server does: the client "leaves").
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** byte length of the frame being read, or -1 while reading the length specifier */
  private expected = -1;

  constructor(private readonly maxFrameBytes = 8 * 1024 * 1024) {}

  push(chunk: Buffer): string[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const out: string[] = [];
    const buf = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.buffered);
    let pos = 0;
    for (;;) {
      if (this.expected < 0) {
        const hash = buf.indexOf(HASH, pos);
        const available = (hash < 0 ? buf.length : hash) - pos;
        if (available > MAX_LENGTH_DIGITS) throw new FramingError('length specifier too long');
        for (let i = pos; i < pos + available; i++) {
          const c = buf[i];
          if (c < 0x30 || c > 0x39) throw new FramingError('invalid character in length specifier');
        }
        if (hash < 0) break;
        if (available === 0) throw new FramingError('missing length specifier');
        const n = Number(buf.toString('latin1', pos, hash));
        if (n <= 0) throw new FramingError('zero-length frame');
        if (n > this.maxFrameBytes) throw new FramingError(`frame of ${n} bytes exceeds limit`);
        this.expected = n;
        pos = hash + 1;
      }
      if (buf.length - pos < this.expected) break;
      out.push(buf.toString('utf8', pos, pos + this.expected));
      pos += this.expected;
      this.expected = -1;
    }
    const rest = pos === 0 ? buf : buf.subarray(pos);
    this.chunks = rest.length ? [rest] : [];
    this.buffered = rest.length;
    return out;
  }

  /** bytes received but not yet returned as a payload */
  get pendingBytes(): number {
    return this.buffered;
  }
}
