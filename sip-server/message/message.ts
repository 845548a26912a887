// SIP request and response objects (RFC 3261 7). Headers stay as text; structured views are parsed on demand.
import { randomBytes, randomFillSync } from 'node:crypto';
import { Headers } from './headers';
import { CSeq, NameAddr, Via, parseCSeq, parseNameAddr, parseVia } from './fields';
import { Uri, parseUri } from './uri';

/** ws/wss: SIP over WebSocket (RFC 7118), one message per frame, on connections the peer opened. */
export type TransportName = 'udp' | 'tcp' | 'tls' | 'ws' | 'wss';

/** Where a message came from (set by the transport layer on every incoming message). */
export interface SourceInfo {
  transport: TransportName;
  /** Remote address and port. */
  address: string;
  port: number;
  /** Our local socket address and port the message arrived on. */
  localAddress: string;
  localPort: number;
  /** For tcp/tls/ws/wss: id of the connection it arrived on (responses reuse it). */
  connectionId?: string;
}

export const MAGIC_COOKIE = 'z9hG4bK';

/**
 * Random bytes for tags, Call-IDs and branches, taken from a 4 KiB block of the CSPRNG refilled when
 * used up: one randomBytes call per block instead of one per token (each byte is still used once).
 */
const POOL = Buffer.allocUnsafeSlow(4096);
let poolUsed = POOL.length;
function randomSlice(bytes: number): Buffer {
  if (bytes > POOL.length) return randomBytes(bytes);
  if (poolUsed + bytes > POOL.length) {
    randomFillSync(POOL);
    poolUsed = 0;
  }
  const out = POOL.subarray(poolUsed, poolUsed + bytes);
  poolUsed += bytes;
  return out;
}

/** Random token for tags and Call-IDs. */
export function randomToken(bytes = 8): string {
  return randomSlice(bytes).toString('hex');
}
/** New RFC 3261 branch with the magic cookie. */
export function newBranch(): string {
  return MAGIC_COOKIE + randomSlice(9).toString('base64url');
}

const EMPTY = Buffer.alloc(0);

/**
 * A body's bytes in a buffer of their own. Buffer.from cuts a short string's bytes from a shared
 * 8 KiB pool, and a message a transaction keeps for its retransmissions (Timers J and L, 32 s) then
 * keeps that whole block alive: at 300 calls/s that was 90 MB of array buffers.
 */
export function ownBuffer(s: string): Buffer {
  if (!s) return EMPTY;
  const buf = Buffer.allocUnsafeSlow(Buffer.byteLength(s));
  buf.write(s);
  return buf;
}

export abstract class SipMessage {
  version = 'SIP/2.0';
  headers: Headers;
  body: Buffer;
  /** Set on messages received from the network. */
  source?: SourceInfo;

  constructor(headers?: Headers, body?: Buffer | string) {
    this.headers = headers ?? new Headers();
    this.body = body === undefined ? EMPTY : typeof body === 'string' ? ownBuffer(body) : body;
  }

  abstract get isRequest(): boolean;
  abstract startLine(): string;

  get(name: string): string | undefined {
    return this.headers.get(name);
  }
  getAll(name: string): string[] {
    return this.headers.getAll(name);
  }

  get callId(): string {
    return this.headers.get('Call-ID') ?? '';
  }
  get cseq(): CSeq {
    return parseCSeq(this.headers.get('CSeq') ?? '');
  }
  get from(): NameAddr {
    return parseNameAddr(this.headers.get('From') ?? '');
  }
  get to(): NameAddr {
    return parseNameAddr(this.headers.get('To') ?? '');
  }
  get fromTag(): string | undefined {
    return this.from.tag;
  }
  get toTag(): string | undefined {
    return this.to.tag;
  }
  get vias(): Via[] {
    return this.headers.getAll('Via').map(parseVia);
  }
  get topVia(): Via | undefined {
    const v = this.headers.get('Via');
    return v === undefined ? undefined : parseVia(v);
  }
  get contacts(): NameAddr[] {
    return this.headers.getAll('Contact').map(parseNameAddr);
  }
  get routes(): NameAddr[] {
    return this.headers.getAll('Route').map(parseNameAddr);
  }
  get recordRoutes(): NameAddr[] {
    return this.headers.getAll('Record-Route').map(parseNameAddr);
  }
  get maxForwards(): number | undefined {
    const v = this.headers.get('Max-Forwards');
    return v === undefined ? undefined : Number(v.trim());
  }
  get contentType(): string | undefined {
    return this.headers.get('Content-Type');
  }
  get bodyText(): string {
    return this.body.toString('utf8');
  }
  set bodyText(s: string) {
    this.body = ownBuffer(s);
  }

  /**
   * Serialize; Content-Length is always written from the actual body. The bytes are a buffer of their
   * own (see ownBuffer): the SIP capture holds what was sent until it is written, longer while Redis is away.
   */
  toBuffer(): Buffer {
    let head = this.startLine() + '\r\n';
    for (const [name, value] of this.headers) {
      if (name === 'Content-Length') continue;
      head += `${name}: ${value}\r\n`;
    }
    head += `Content-Length: ${this.body.length}\r\n\r\n`;
    const headLength = Buffer.byteLength(head);
    const out = Buffer.allocUnsafeSlow(headLength + this.body.length);
    out.write(head);
    this.body.copy(out, headLength);
    return out;
  }

  toString(): string {
    return this.toBuffer().toString('utf8');
  }
}

export class SipRequest extends SipMessage {
  method: string;
  /** Request-URI as text (see `requestUri` for the parsed form). */
  uri: string;

  constructor(method: string, uri: string | Uri, headers?: Headers, body?: Buffer | string) {
    super(headers, body);
    this.method = method;
    this.uri = uri.toString();
  }

  get isRequest(): true {
    return true;
  }
  get requestUri(): Uri {
    return parseUri(this.uri);
  }
  startLine(): string {
    return `${this.method} ${this.uri} ${this.version}`;
  }

  clone(): SipRequest {
    const r = new SipRequest(this.method, this.uri, this.headers.clone(), Buffer.from(this.body));
    r.source = this.source;
    return r;
  }

  /**
   * Build a response per RFC 3261 8.2.6: Via (all), From, To, Call-ID, CSeq copied, a To tag added for
   * non-100 responses when the request had none. Timestamp copied for 100.
   */
  makeResponse(status: number, reason?: string, opts: { toTag?: string; copyRecordRoute?: boolean } = {}): SipResponse {
    const h = new Headers();
    for (const v of this.headers.getAll('Via')) h.append('Via', v);
    const from = this.headers.get('From');
    if (from !== undefined) h.append('From', from);
    const to = this.headers.get('To');
    if (to !== undefined) {
      let value = to;
      if (status > 100) {
        try {
          const na = parseNameAddr(to);
          if (!na.tag) value = `${to.trim()};tag=${opts.toTag ?? randomToken()}`;
        } catch {
          /* keep malformed To as is */
        }
      }
      h.append('To', value);
    }
    const callId = this.headers.get('Call-ID');
    if (callId !== undefined) h.append('Call-ID', callId);
    const cseq = this.headers.get('CSeq');
    if (cseq !== undefined) h.append('CSeq', cseq);
    if (status === 100) {
      const ts = this.headers.get('Timestamp');
      if (ts !== undefined) h.append('Timestamp', ts);
    }
    if (opts.copyRecordRoute && status > 100 && status < 300) {
      for (const rr of this.headers.getAll('Record-Route')) h.append('Record-Route', rr);
    }
    return new SipResponse(status, reason ?? reasonPhrase(status), h);
  }
}

export class SipResponse extends SipMessage {
  status: number;
  reason: string;

  constructor(status: number, reason?: string, headers?: Headers, body?: Buffer | string) {
    super(headers, body);
    this.status = status;
    this.reason = reason ?? reasonPhrase(status);
  }

  get isRequest(): false {
    return false;
  }
  startLine(): string {
    return `${this.version} ${this.status} ${this.reason}`;
  }

  clone(): SipResponse {
    const r = new SipResponse(this.status, this.reason, this.headers.clone(), Buffer.from(this.body));
    r.source = this.source;
    return r;
  }
}

export function isRequest(m: SipMessage): m is SipRequest {
  return m.isRequest;
}

const REASONS: Record<number, string> = {
  100: 'Trying',
  180: 'Ringing',
  181: 'Call Is Being Forwarded',
  182: 'Queued',
  183: 'Session Progress',
  200: 'OK',
  202: 'Accepted',
  300: 'Multiple Choices',
  301: 'Moved Permanently',
  302: 'Moved Temporarily',
  305: 'Use Proxy',
  380: 'Alternative Service',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  410: 'Gone',
  413: 'Request Entity Too Large',
  414: 'Request-URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Unsupported URI Scheme',
  420: 'Bad Extension',
  421: 'Extension Required',
  423: 'Interval Too Brief',
  480: 'Temporarily Unavailable',
  481: 'Call/Transaction Does Not Exist',
  482: 'Loop Detected',
  483: 'Too Many Hops',
  484: 'Address Incomplete',
  485: 'Ambiguous',
  486: 'Busy Here',
  487: 'Request Terminated',
  488: 'Not Acceptable Here',
  489: 'Bad Event',
  491: 'Request Pending',
  493: 'Undecipherable',
  500: 'Server Internal Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Server Time-out',
  505: 'Version Not Supported',
  513: 'Message Too Large',
  600: 'Busy Everywhere',
  603: 'Decline',
  604: 'Does Not Exist Anywhere',
  606: 'Not Acceptable',
};

export function reasonPhrase(status: number): string {
  return REASONS[status] ?? (status < 200 ? 'Provisional' : status < 300 ? 'OK' : 'Error');
}
