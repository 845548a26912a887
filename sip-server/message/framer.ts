// Stream framing for SIP over TCP/TLS (RFC 3261 18.3): messages are delimited by Content-Length.
// CRLF keep-alives (RFC 5626 3.5.1) between messages are reported, not treated as errors.
import { headerEnd } from './parser';

export type FrameEvent = { type: 'message'; data: Buffer } | { type: 'keepalive'; ping: boolean } | { type: 'error'; reason: string };

const CL_RE = /^(?:content-length|l)[ \t]*:[ \t]*(\S*)/im;

/**
 * Feed raw stream bytes with push(); it returns the complete frames found so far. After an
 * 'error' the stream cannot be resynchronised and the caller should close the connection.
 */
export class StreamFramer {
  private buf: Buffer = Buffer.alloc(0);
  private failed = false;

  constructor(private readonly maxMessageSize = 65535) {}

  /** Bytes buffered and not yet framed. */
  get pending(): number {
    return this.buf.length;
  }

  push(chunk: Buffer): FrameEvent[] {
    if (this.failed) return [];
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out: FrameEvent[] = [];
    for (;;) {
      // keep-alives: a double CRLF is a ping, a single CRLF a pong
      let skip = 0;
      while (skip < this.buf.length && (this.buf[skip] === 0x0d || this.buf[skip] === 0x0a)) skip++;
      if (skip) {
        // fewer than 4 CR/LF bytes and nothing else yet: a ping (CRLFCRLF) may still be arriving
        if (skip === this.buf.length && skip < 4) break;
        const crlfs = this.buf.subarray(0, skip).toString('latin1');
        out.push({ type: 'keepalive', ping: crlfs.includes('\r\n\r\n') || crlfs.includes('\n\n') });
        this.buf = this.buf.subarray(skip);
      }
      if (!this.buf.length) break;
      const hEnd = headerEnd(this.buf);
      if (hEnd < 0) {
        if (this.buf.length > this.maxMessageSize) return this.fail(out, 'header section too large');
        break;
      }
      const head = this.buf.toString('latin1', 0, hEnd);
      const m = CL_RE.exec(head);
      let len = 0;
      if (m) {
        if (!/^\d{1,10}$/.test(m[1])) return this.fail(out, 'bad Content-Length');
        len = Number(m[1]);
      }
      if (hEnd + len > this.maxMessageSize) return this.fail(out, 'message too large');
      if (this.buf.length < hEnd + len) break;
      out.push({ type: 'message', data: Buffer.from(this.buf.subarray(0, hEnd + len)) });
      this.buf = this.buf.subarray(hEnd + len);
    }
    return out;
  }

  private fail(out: FrameEvent[], reason: string): FrameEvent[] {
    this.failed = true;
    this.buf = Buffer.alloc(0);
    out.push({ type: 'error', reason });
    return out;
  }
}
