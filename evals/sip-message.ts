/**
 * The few SIP messages a simulated caller sends and reads (RFC 3261 over UDP): a parser for what the
 * edge answers or asks (a response to the INVITE or BYE, a BYE or re-INVITE of the platform) and the
 * text of the requests and responses it sends. Malformed input parses to null and is ignored.
 */

export interface SipMessage {
  /** a request's method, or null for a response */
  method: string | null;
  /** a response's status code, or 0 for a request */
  status: number;
  headers: Map<string, string[]>;
  body: string;
}

const COMPACT: Record<string, string> = { v: 'via', f: 'from', t: 'to', i: 'call-id', m: 'contact', l: 'content-length', c: 'content-type' };

export function parseSip(buf: Buffer): SipMessage | null {
  const text = buf.toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  if (split < 0) return null;
  const lines = text.slice(0, split).split('\r\n');
  const first = lines[0] ?? '';
  const resp = /^SIP\/2\.0 (\d{3}) /.exec(first);
  const req = /^([A-Z]+) \S+ SIP\/2\.0$/.exec(first);
  if (!resp && !req) return null;
  const headers = new Map<string, string[]>();
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const raw = line.slice(0, i).trim().toLowerCase();
    const name = COMPACT[raw] ?? raw;
    headers.set(name, [...(headers.get(name) ?? []), line.slice(i + 1).trim()]);
  }
  const len = Number(headers.get('content-length')?.[0] ?? '0');
  return { method: req ? req[1]! : null, status: resp ? Number(resp[1]) : 0, headers, body: text.slice(split + 4, split + 4 + (Number.isFinite(len) ? len : 0)) };
}

export const header = (m: SipMessage, name: string): string => m.headers.get(name)?.[0] ?? '';

/** The CSeq method of a message ("1 INVITE" → INVITE). */
export const cseqMethod = (m: SipMessage): string => header(m, 'cseq').split(/\s+/)[1] ?? '';

/** The tag parameter of a From/To value. */
export const tagOf = (v: string): string => /;\s*tag=([^;>\s]+)/i.exec(v)?.[1] ?? '';

/** The audio address of an SDP: its c= host and m=audio port, or null. */
export function sdpAudio(sdp: string): { host: string; port: number } | null {
  const host = /^c=IN IP4 (\S+)/m.exec(sdp)?.[1];
  const port = /^m=audio (\d+) /m.exec(sdp)?.[1];
  return host && port ? { host, port: Number(port) } : null;
}

/** A request's text: the start line, the headers in order, Content-Length, the body. */
export function request(method: string, uri: string, headers: [string, string][], body = '', contentType = 'application/sdp'): string {
  const all = [...headers, ...(body ? ([['Content-Type', contentType]] as [string, string][]) : [])];
  return `${method} ${uri} SIP/2.0\r\n${all.map(([k, v]) => `${k}: ${v}\r\n`).join('')}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** A response to `req` (its Via, From, To, Call-ID and CSeq copied; `toTag` added to To when it has none). */
export function response(req: SipMessage, status: number, reason: string, toTag: string, extra: [string, string][] = [], body = ''): string {
  const to = header(req, 'to');
  const headers: [string, string][] = [
    ...(req.headers.get('via') ?? []).map((v) => ['Via', v] as [string, string]),
    ['From', header(req, 'from')],
    ['To', tagOf(to) ? to : `${to};tag=${toTag}`],
    ['Call-ID', header(req, 'call-id')],
    ['CSeq', header(req, 'cseq')],
    ...extra,
    ...(body ? ([['Content-Type', 'application/sdp']] as [string, string][]) : []),
  ];
  return `SIP/2.0 ${status} ${reason}\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}
