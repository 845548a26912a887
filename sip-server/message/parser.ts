// SIP message parser (RFC 3261 7 and 25, checked against the RFC 4475 torture tests).
// Strict on what the RFC makes structural (start line, scalar headers, Content-Length), tolerant on
// whitespace, folding, case and compact forms. Every failure is a SipParseError; nothing else escapes.
import { Headers, LIST_HEADERS, canonicalName, canonicalNameMemo, headerKey, splitList } from './headers';
import { parseCSeq, parseNameAddr, parseVia } from './fields';
import { SipMessage, SipRequest, SipResponse, ownBuffer } from './message';
import { SipUri, parseUri } from './uri';
import { isToken } from './params';

export interface ParseLimits {
  /** Largest accepted message (start line + headers + body), bytes. */
  maxMessageSize: number;
  /** Largest number of header lines. */
  maxHeaders: number;
  /** Longest single (unfolded) header line, bytes. */
  maxHeaderLength: number;
}

export const DEFAULT_LIMITS: ParseLimits = { maxMessageSize: 65535, maxHeaders: 256, maxHeaderLength: 16384 };

export interface ParseOptions extends Partial<ParseLimits> {
  /**
   * 'datagram' (UDP): bytes after Content-Length are discarded, a missing Content-Length means "rest of
   * the datagram", a Content-Length larger than the datagram is an error (RFC 3261 18.3).
   * 'stream': the buffer holds exactly one framed message (see StreamFramer).
   */
  mode?: 'datagram' | 'stream';
}

export class SipParseError extends Error {
  /** Status to answer with when a response can be formed (400, or 505 for a bad version, 513 too large). */
  readonly status: number;
  /**
   * What could be recovered. For a request whose Via, From, To, Call-ID and CSeq parsed, `partial`
   * is a SipRequest good enough for `makeResponse()`; see `canRespond`.
   */
  readonly partial?: SipMessage;

  constructor(message: string, status = 400, partial?: SipMessage) {
    super(message);
    this.name = 'SipParseError';
    this.status = status;
    this.partial = partial;
  }

  /** True when `partial` is a request with enough headers to build a response (RFC 3261 8.2.6). */
  get canRespond(): boolean {
    const p = this.partial;
    if (!p || !(p instanceof SipRequest) || p.method === 'ACK') return false;
    try {
      // Via must parse (it routes the response); the others are echoed as received
      for (const h of ['Via', 'From', 'To', 'Call-ID', 'CSeq']) if (!p.headers.get(h)) return false;
      if (!p.topVia) return false; // parses the Via: throws when it does not
      return true;
    } catch {
      return false;
    }
  }
}

const REQUEST_LINE = /^([A-Za-z0-9\-.!%*_+`'~]+) (\S+) SIP\/(\d+)\.(\d+)$/;
const STATUS_LINE = /^SIP\/(\d+)\.(\d+) (\d{3})(?: ([^\r\n]*))?$/;
const SINGLE = ['Call-ID', 'CSeq', 'From', 'To', 'Max-Forwards', 'Content-Length', 'Content-Type', 'Expires'];
const UINT32 = /^\d{1,10}$/;
const DATE_RE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** Trim SP/HT only: String#trim would also eat U+FEFF and other Unicode spaces that are content. */
function lwsTrim(s: string): string {
  return s.replace(/^[ \t]+|[ \t]+$/g, '');
}

function uint32(v: string): boolean {
  return UINT32.test(v) && Number(v) <= 0xffffffff;
}

/** Index just past the blank line ending the header section, or -1. Accepts CRLFCRLF and bare LFLF. */
export function headerEnd(buf: Buffer, from = 0): number {
  for (let i = from; i < buf.length; i++) {
    if (buf[i] !== 0x0a) continue;
    if (buf[i + 1] === 0x0a) return i + 2;
    if (buf[i + 1] === 0x0d && buf[i + 2] === 0x0a) return i + 3;
  }
  return -1;
}

/** Parse one SIP message. Throws SipParseError only. */
export function parseMessage(input: Buffer | string, opts: ParseOptions = {}): SipRequest | SipResponse {
  try {
    // a string's bytes in a buffer of their own, not the shared pool: the body is a view of them
    return parseUnsafe(typeof input === 'string' ? ownBuffer(input) : input, opts);
  } catch (e) {
    if (e instanceof SipParseError) throw e;
    throw new SipParseError(`malformed message: ${(e as Error).message}`);
  }
}

function parseUnsafe(buf: Buffer, opts: ParseOptions): SipRequest | SipResponse {
  const limits = { ...DEFAULT_LIMITS, ...opts };
  const mode = opts.mode ?? 'datagram';
  if (buf.length > limits.maxMessageSize) throw new SipParseError('message too large', 513);
  let start = 0;
  while (start < buf.length && (buf[start] === 0x0d || buf[start] === 0x0a)) start++; // RFC 3261 7.5
  if (start >= buf.length) throw new SipParseError('empty message');
  const hEnd = headerEnd(buf, start);
  if (hEnd < 0) throw new SipParseError('no end of header section');
  const head = buf.toString('utf8', start, hEnd);
  const lines = head.split(/\r?\n/);
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  const startLine = lines[0];

  let msg: SipRequest | SipResponse;
  let m: RegExpExecArray | null;
  let versionOk = true;
  if ((m = STATUS_LINE.exec(startLine))) {
    versionOk = m[1] === '2' && m[2] === '0';
    const status = Number(m[3]);
    if (status < 100 || status > 699) throw new SipParseError(`bad status code ${m[3]}`);
    msg = new SipResponse(status, m[4] ?? '');
  } else if ((m = REQUEST_LINE.exec(startLine))) {
    versionOk = m[3] === '2' && m[4] === '0';
    msg = new SipRequest(m[1], m[2]);
  } else if (startLine.startsWith('SIP/')) {
    throw new SipParseError('malformed Status-Line');
  } else {
    // Salvage the headers so that a 400 naming the problem can still be sent.
    const partial = new SipRequest(startLine.split(' ')[0] || 'UNKNOWN', 'sip:invalid');
    safeHeaders(lines, partial, limits);
    throw new SipParseError('malformed Request-Line', 400, partial);
  }

  try {
    parseHeaderLines(lines, msg.headers, limits);
  } catch (e) {
    if (e instanceof SipParseError) {
      if (msg instanceof SipRequest) safeHeaders(lines, msg, limits);
      throw new SipParseError(e.message, e.status, msg);
    }
    throw e;
  }

  const fail = (reason: string, status = 400): never => {
    throw new SipParseError(reason, status, msg);
  };
  if (!versionOk) fail('SIP version not supported', 505);
  validate(msg, fail);

  // Body and Content-Length (RFC 3261 18.3, 20.14)
  const cls = msg.headers.getAll('Content-Length');
  const available = buf.length - hEnd;
  if (cls.length > 1) fail('multiple Content-Length values');
  let bodyLen = available;
  if (cls.length === 1) {
    const v = cls[0];
    if (!uint32(v)) fail(`bad Content-Length: ${v}`);
    bodyLen = Number(v);
    if (bodyLen > available) fail(`Content-Length ${bodyLen} larger than the ${available} body bytes received`);
  } else if (mode === 'stream') bodyLen = 0;
  msg.body = buf.subarray(hEnd, hEnd + bodyLen);
  return msg;
}

function parseHeaderLines(lines: string[], headers: Headers, limits: ParseLimits): void {
  let current: string | undefined;
  let count = 0;
  const flush = (line: string): void => {
    if (++count > limits.maxHeaders) throw new SipParseError('too many header fields', 400);
    if (line.length > limits.maxHeaderLength) throw new SipParseError('header field too long', 400);
    const colon = line.indexOf(':');
    if (colon <= 0) throw new SipParseError(`header line without a name: ${line.slice(0, 40)}`);
    const rawName = line.slice(0, colon).replace(/[ \t]+$/, '');
    if (!isToken(rawName)) throw new SipParseError(`bad header name: ${rawName.slice(0, 40)}`);
    const name = canonicalNameMemo(rawName);
    const value = lwsTrim(line.slice(colon + 1));
    if (value.includes(',') && LIST_HEADERS.has(headerKey(name))) {
      for (const part of splitList(value)) headers.pushRaw(name, part);
    } else headers.pushRaw(name, value);
  };
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (line.length && (line[0] === ' ' || line[0] === '\t')) {
      // line folding: continuation replaces CRLF+WS by a single SP (RFC 3261 7.3.1)
      if (current === undefined) throw new SipParseError('continuation line before the first header');
      current += ' ' + lwsTrim(line);
      if (current.length > limits.maxHeaderLength) throw new SipParseError('header field too long', 400);
      continue;
    }
    if (current !== undefined) flush(current);
    current = line;
  }
  if (current !== undefined) flush(current);
}

/** Best effort: keep the header lines that do parse, so a 400 can echo Via/From/To/Call-ID/CSeq. */
function safeHeaders(lines: string[], msg: SipMessage, limits: ParseLimits): void {
  msg.headers = new Headers();
  let current: string | undefined;
  const take = (line: string): void => {
    const colon = line.indexOf(':');
    if (colon <= 0 || line.length > limits.maxHeaderLength) return;
    const rawName = line.slice(0, colon).trim();
    if (!isToken(rawName)) return;
    const name = canonicalName(rawName);
    const value = lwsTrim(line.slice(colon + 1));
    if (name === 'Via') for (const part of splitList(value)) msg.headers.pushRaw(name, part);
    else msg.headers.pushRaw(name, value);
  };
  for (let i = 1; i < lines.length && i <= limits.maxHeaders; i++) {
    const line = lines[i];
    if (line.length && (line[0] === ' ' || line[0] === '\t')) {
      if (current !== undefined) current += ' ' + lwsTrim(line);
      continue;
    }
    if (current !== undefined) take(current);
    current = line;
  }
  if (current !== undefined) take(current);
}

function validate(msg: SipRequest | SipResponse, fail: (reason: string, status?: number) => never): void {
  const h = msg.headers;
  for (const name of ['Via', 'From', 'To', 'Call-ID', 'CSeq']) if (!h.has(name)) fail(`missing ${name} header`);
  for (const name of SINGLE) if (h.count(name) > 1) fail(`more than one ${name} header`);
  for (const v of h.getAll('Via')) {
    try {
      parseVia(v);
    } catch {
      fail(`bad Via: ${v.slice(0, 60)}`);
    }
  }
  for (const name of ['From', 'To']) {
    try {
      parseNameAddr(h.get(name)!);
    } catch (e) {
      fail(`bad ${name}: ${(e as Error).message}`);
    }
  }
  if (!h.get('Call-ID')) fail('empty Call-ID');
  let cseq;
  try {
    cseq = parseCSeq(h.get('CSeq')!);
  } catch {
    fail('bad CSeq');
  }
  const mf = h.get('Max-Forwards');
  if (mf !== undefined && !(/^\d{1,10}$/.test(mf) && Number(mf) <= 255)) fail(`bad Max-Forwards: ${mf}`);
  const exp = h.get('Expires');
  if (exp !== undefined && !uint32(exp)) fail(`bad Expires: ${exp}`);
  const ra = h.get('Retry-After');
  if (ra !== undefined) {
    const d = /^(\d+)/.exec(ra);
    if (!d || !uint32(d[1])) fail(`bad Retry-After: ${ra}`);
  }
  const date = h.get('Date');
  if (date !== undefined && !DATE_RE.test(date)) fail(`bad Date: ${date}`);
  for (const c of h.getAll('Contact')) {
    try {
      const na = parseNameAddr(c);
      const e = na.params.expires;
      if (e !== undefined && e !== null && !uint32(e)) fail(`bad Contact expires: ${e}`);
    } catch (e) {
      if (e instanceof SipParseError) throw e;
      fail(`bad Contact: ${(e as Error).message}`);
    }
  }
  if (msg instanceof SipRequest) {
    if (cseq!.method !== msg.method) fail('CSeq method does not match the Request-Line');
    let ruri;
    try {
      ruri = parseUri(msg.uri);
    } catch (e) {
      fail(`bad Request-URI: ${(e as Error).message}`);
    }
    if (ruri instanceof SipUri && Object.keys(ruri.headers).length) fail('Request-URI must not contain headers');
  }
}
