// SIP/SIPS URIs (RFC 3261 19.1) and a passthrough for other absolute URIs (tel:, urn:, http:...).
import { Params, formatParams, parseParams } from './params';

export class UriError extends Error {}

const HOSTNAME_RE = /^[A-Za-z0-9](?:[A-Za-z0-9\-.]*[A-Za-z0-9.])?$|^[A-Za-z0-9]$/;
const IPV4_RE = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const SCHEME_RE = /^[A-Za-z][A-Za-z0-9+\-.]*$/;
// user / password characters: unreserved, escaped and user-unreserved (RFC 3261 25.1)
const USER_RE = /^(?:[A-Za-z0-9\-_.!~*'()&=+$,;?/]|%[0-9A-Fa-f]{2})+$/;
const PASSWORD_RE = /^(?:[A-Za-z0-9\-_.!~*'()&=+$,]|%[0-9A-Fa-f]{2})*$/;

export class SipUri {
  scheme: 'sip' | 'sips' = 'sip';
  user?: string;
  password?: string;
  /** Host as written; IPv6 references keep their brackets ("[::1]"). */
  host = '';
  port?: number;
  params: Params = {};
  /** URI headers ("?a=b&c=d"), raw values (still escaped). */
  headers: Record<string, string> = {};

  constructor(init?: Partial<Pick<SipUri, 'scheme' | 'user' | 'password' | 'host' | 'port' | 'params' | 'headers'>>) {
    if (init) Object.assign(this, init);
  }

  get isSip(): true {
    return true;
  }

  /** Host without IPv6 brackets, suitable for sockets. */
  get hostname(): string {
    return this.host.startsWith('[') ? this.host.slice(1, -1) : this.host;
  }

  get transportParam(): string | undefined {
    return this.params.transport?.toLowerCase() ?? undefined;
  }

  /** True when the URI carries ";lr" (loose routing, RFC 3261 16.12). */
  get lr(): boolean {
    return 'lr' in this.params;
  }

  clone(): SipUri {
    return new SipUri({ ...this, params: { ...this.params }, headers: { ...this.headers } });
  }

  toString(): string {
    let s = `${this.scheme}:`;
    if (this.user !== undefined) {
      s += this.user;
      if (this.password !== undefined) s += `:${this.password}`;
      s += '@';
    }
    s += this.host;
    if (this.port !== undefined) s += `:${this.port}`;
    s += formatParams(this.params);
    const hs = Object.entries(this.headers);
    if (hs.length) s += '?' + hs.map(([k, v]) => `${k}=${v}`).join('&');
    return s;
  }
}

/** Any non-SIP absolute URI, kept verbatim. */
export class OtherUri {
  constructor(
    public scheme: string,
    public raw: string,
  ) {}
  get isSip(): false {
    return false;
  }
  toString(): string {
    return this.raw;
  }
}

export type Uri = SipUri | OtherUri;

/** Validates a host (hostname, IPv4 or bracketed IPv6). */
/** Every dotted octet of an IPV4_RE match is at most 255 (no split: this runs for every URI parsed). */
function ipv4OctetsInRange(host: string): boolean {
  let v = 0;
  for (let i = 0; i < host.length; i++) {
    const c = host.charCodeAt(i);
    if (c === 46) v = 0;
    else if ((v = v * 10 + c - 48) > 255) return false;
  }
  return true;
}

export function isValidHost(host: string): boolean {
  if (host.startsWith('[')) return /^\[[0-9A-Fa-f:.]+\]$/.test(host) && host.includes(':');
  if (IPV4_RE.test(host)) return ipv4OctetsInRange(host);
  return HOSTNAME_RE.test(host);
}

/** Parse a URI; throws UriError on bad syntax. Non-SIP schemes are returned as OtherUri. */
export function parseUri(input: string): Uri {
  const s = input.trim();
  const colon = s.indexOf(':');
  if (colon <= 0) throw new UriError(`URI has no scheme: ${input}`);
  const scheme = s.slice(0, colon);
  if (!SCHEME_RE.test(scheme)) throw new UriError(`bad URI scheme: ${scheme}`);
  const lower = scheme.toLowerCase();
  if (lower !== 'sip' && lower !== 'sips') {
    if (/[\s<>"]/.test(s)) throw new UriError(`bad characters in URI: ${input}`);
    return new OtherUri(lower, s);
  }
  if (/[\s<>"]/.test(s)) throw new UriError(`bad characters in SIP URI: ${input}`);
  const uri = new SipUri({ scheme: lower as 'sip' | 'sips' });
  let rest = s.slice(colon + 1);
  const at = rest.indexOf('@');
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const pc = userinfo.indexOf(':');
    const user = pc >= 0 ? userinfo.slice(0, pc) : userinfo;
    if (!user || !USER_RE.test(user)) throw new UriError(`bad user part: ${userinfo}`);
    uri.user = user;
    if (pc >= 0) {
      const pw = userinfo.slice(pc + 1);
      if (!PASSWORD_RE.test(pw)) throw new UriError('bad password part');
      uri.password = pw;
    }
  }
  // host[:port] ends at ';' or '?'
  let hostEnd = rest.length;
  for (let i = 0; i < rest.length; i++)
    if (rest[i] === ';' || rest[i] === '?') {
      hostEnd = i;
      break;
    }
  let hostport = rest.slice(0, hostEnd);
  rest = rest.slice(hostEnd);
  if (hostport.startsWith('[')) {
    const close = hostport.indexOf(']');
    if (close < 0) throw new UriError('unterminated IPv6 reference');
    uri.host = hostport.slice(0, close + 1);
    hostport = hostport.slice(close + 1);
    if (hostport) {
      if (!hostport.startsWith(':')) throw new UriError('garbage after IPv6 reference');
      uri.port = parsePort(hostport.slice(1));
    }
  } else {
    const pc = hostport.indexOf(':');
    uri.host = pc >= 0 ? hostport.slice(0, pc) : hostport;
    if (pc >= 0) uri.port = parsePort(hostport.slice(pc + 1));
  }
  if (!isValidHost(uri.host)) throw new UriError(`bad host: ${uri.host}`);
  const q = rest.indexOf('?');
  const paramStr = q >= 0 ? rest.slice(0, q) : rest;
  if (paramStr) {
    const p = parseParams(paramStr);
    if (!p) throw new UriError(`bad URI parameters: ${paramStr}`);
    uri.params = p;
  }
  if (q >= 0) {
    for (const pair of rest.slice(q + 1).split('&')) {
      if (!pair) continue;
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new UriError(`bad URI header: ${pair}`);
      uri.headers[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  }
  return uri;
}

function parsePort(p: string): number {
  if (!/^\d{1,5}$/.test(p)) throw new UriError(`bad port: ${p}`);
  const n = Number(p);
  if (n > 65535) throw new UriError(`port out of range: ${p}`);
  return n;
}

/** Parse and require a SIP/SIPS URI. */
export function parseSipUri(input: string): SipUri {
  const u = parseUri(input);
  if (!(u instanceof SipUri)) throw new UriError(`not a SIP URI: ${input}`);
  return u;
}
