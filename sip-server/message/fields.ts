// Structured header values: name-addr (From/To/Contact/Route/Record-Route), Via, CSeq.
import { Params, endOfQuoted, formatParams, isToken, parseParams, unquote } from './params';
import { Uri, UriError, parseUri, isValidHost } from './uri';

export class FieldError extends Error {}

/** name-addr / addr-spec with header parameters: `"Alice" <sip:a@b>;tag=1`. */
export class NameAddr {
  /** Display name without quotes (undefined when absent). */
  displayName?: string;
  uri: Uri;
  params: Params;
  /** True for the Contact wildcard "*". */
  wildcard = false;

  constructor(uri: Uri, params: Params = {}, displayName?: string) {
    this.uri = uri;
    this.params = params;
    this.displayName = displayName;
  }

  get tag(): string | undefined {
    return this.params.tag ?? undefined;
  }
  set tag(v: string | undefined) {
    if (v === undefined) delete this.params.tag;
    else this.params.tag = v;
  }

  clone(): NameAddr {
    const n = new NameAddr(parseUri(this.uri.toString()), { ...this.params }, this.displayName);
    n.wildcard = this.wildcard;
    return n;
  }

  toString(): string {
    if (this.wildcard) return '*';
    const dn =
      this.displayName !== undefined && this.displayName !== ''
        ? isToken(this.displayName.replace(/ /g, '')) && !/^\s|\s$/.test(this.displayName)
          ? `${this.displayName} `
          : `"${this.displayName.replace(/(["\\])/g, '\\$1')}" `
        : '';
    return `${dn}<${this.uri.toString()}>${formatParams(this.params)}`;
  }
}

/** Parse a name-addr or addr-spec with params. Throws FieldError. */
export function parseNameAddr(value: string): NameAddr {
  const s = value.trim();
  if (s === '*') {
    const n = new NameAddr(parseUri('sip:invalid'), {});
    n.wildcard = true;
    return n;
  }
  let display: string | undefined;
  let uriStr: string;
  let rest: string;
  let i = 0;
  if (s[0] === '"') {
    const end = endOfQuoted(s, 0);
    if (end < 0) throw new FieldError('unterminated quoted display name');
    display = unquote(s.slice(0, end + 1));
    i = end + 1;
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (s[i] !== '<') throw new FieldError('display name must be followed by <URI>');
  }
  const lt = s.indexOf('<', i);
  if (lt >= 0) {
    if (display === undefined) {
      const dn = s.slice(0, lt).trim();
      if (dn) {
        // unquoted display name: *(token LWS)
        if (!dn.split(/[ \t]+/).every(isToken)) throw new FieldError(`bad display name: ${dn}`);
        display = dn;
      }
    } else if (s.slice(i, lt).trim()) throw new FieldError('garbage before <');
    const gt = s.indexOf('>', lt);
    if (gt < 0) throw new FieldError('missing >');
    uriStr = s.slice(lt + 1, gt);
    if (uriStr !== uriStr.trim()) throw new FieldError('spaces inside <> around the URI');
    rest = s.slice(gt + 1);
  } else {
    // addr-spec: the URI ends at the first ';' (parameters then belong to the header, RFC 3261 20.10)
    const semi = s.indexOf(';');
    uriStr = semi >= 0 ? s.slice(0, semi) : s;
    rest = semi >= 0 ? s.slice(semi) : '';
    if (/[\s,?]/.test(uriStr.trim())) throw new FieldError('addr-spec with spaces, commas or ? must be in <>');
  }
  let uri: Uri;
  try {
    uri = parseUri(uriStr);
  } catch (e) {
    throw new FieldError((e as UriError).message);
  }
  rest = rest.trim();
  if (rest && rest[0] !== ';') throw new FieldError(`unexpected text after address: ${rest}`);
  const params = parseParams(rest);
  if (!params) throw new FieldError(`bad header parameters: ${rest}`);
  return new NameAddr(uri, params, display);
}

/** One Via header field value. */
export class Via {
  protocol = 'SIP/2.0';
  /** Upper-case transport token: UDP, TCP, TLS, SCTP, WS, WSS or any other token. */
  transport: string;
  host: string;
  port?: number;
  params: Params;

  constructor(transport: string, host: string, port?: number, params: Params = {}) {
    this.transport = transport.toUpperCase();
    this.host = host;
    this.port = port;
    this.params = params;
  }

  get branch(): string | undefined {
    return this.params.branch ?? undefined;
  }
  get received(): string | undefined {
    return this.params.received ?? undefined;
  }
  get maddr(): string | undefined {
    return this.params.maddr ?? undefined;
  }
  /** rport: undefined = absent, null = present without value (request), number = filled in. */
  get rport(): number | null | undefined {
    if (!('rport' in this.params)) return undefined;
    const v = this.params.rport;
    return v === null || v === '' ? null : Number(v);
  }

  toString(): string {
    return `${this.protocol}/${this.transport} ${this.host}${this.port !== undefined ? `:${this.port}` : ''}${formatParams(this.params)}`;
  }
}

export function parseVia(value: string): Via {
  const m = /^\s*([!-~]+?)\s*\/\s*([!-~]+?)\s*\/\s*([A-Za-z0-9\-.!%*_+`'~]+)\s+(\[[0-9A-Fa-f:.]+\]|[^\s:;]+)(?:\s*:\s*(\d{1,5}))?\s*(;.*)?$/s.exec(value);
  if (!m) throw new FieldError(`bad Via: ${value}`);
  const [, name, version, transport, host, port, params] = m;
  if (!isToken(name) || !isToken(version)) throw new FieldError('bad Via protocol');
  if (!isValidHost(host)) throw new FieldError(`bad Via host: ${host}`);
  const p = parseParams(params ?? '');
  if (!p) throw new FieldError('bad Via parameters');
  const portNum = port !== undefined ? Number(port) : undefined;
  if (portNum !== undefined && portNum > 65535) throw new FieldError('Via port out of range');
  const via = new Via(transport, host, portNum, p);
  via.protocol = `${name.toUpperCase()}/${version}`;
  return via;
}

export interface CSeq {
  seq: number;
  method: string;
}

export function parseCSeq(value: string): CSeq {
  const m = /^\s*(\d{1,10})\s+([A-Za-z0-9\-.!%*_+`'~]+)\s*$/.exec(value);
  if (!m) throw new FieldError(`bad CSeq: ${value}`);
  const seq = Number(m[1]);
  if (seq > 0xffffffff) throw new FieldError('CSeq number exceeds 2^32-1');
  return { seq, method: m[2] };
}
