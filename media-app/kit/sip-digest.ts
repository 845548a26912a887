/**
 * SIP digest authentication (RFC 3261 §22, RFC 8760): challenges for MD5 and SHA-256 with qop=auth,
 * and the check of an Authorization header. A nonce is a timestamp and a random part sealed with an
 * HMAC, under a secret every media-app node shares, over the realm and the source address it was
 * issued to: any node tells one of ours from a made-up one, and one issued to another address is
 * not ours for this one. Whether a nonce was already used is registrar/nonce-use.ts (Redis).
 * Both sides use it: the registrar challenges REGISTERs and INVITEs (registrar/index.ts), and our own
 * REGISTERs to a carrier answer its challenge with `digestResponse` (outreg/exchange.ts).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

import { sourceSubject } from '../../core/net';

import { DEFAULT_DIGEST_ALGORITHMS, isDigestAlgorithm, type DigestAlgorithm } from '../../core/extensions/digest-algorithms';

export type { DigestAlgorithm };

export interface DigestCredentials {
  username: string;
  realm: string;
  nonce: string;
  uri: string;
  response: string;
  algorithm: DigestAlgorithm;
  cnonce?: string;
  qop?: string;
  nc?: string;
  opaque?: string;
}

/** The parameters of `Digest k=v, k="v", ...`; null when the scheme is not Digest. */
export function parseDigest(header: string | undefined): Record<string, string> | null {
  if (!header) return null;
  const m = /^\s*Digest\s+(.*)$/is.exec(header);
  if (!m) return null;
  const out: Record<string, string> = {};
  const re = /([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))\s*(?:,|$)/g;
  let p: RegExpExecArray | null;
  while ((p = re.exec(m[1]!))) out[p[1]!.toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : p[3]!;
  return out;
}

/** The credentials of an Authorization header, or null when it is malformed or uses another algorithm. */
export function parseCredentials(header: string | undefined): DigestCredentials | null {
  const p = parseDigest(header);
  if (!p || !p.username || !p.realm || !p.nonce || !p.uri || !p.response) return null;
  const alg = (p.algorithm ?? 'MD5').toUpperCase();
  if (!isDigestAlgorithm(alg)) return null;
  if (p.qop && (p.qop !== 'auth' || !p.cnonce || !p.nc)) return null;
  return {
    username: p.username,
    realm: p.realm,
    nonce: p.nonce,
    uri: p.uri,
    response: p.response.toLowerCase(),
    algorithm: alg,
    cnonce: p.cnonce,
    qop: p.qop,
    nc: p.nc,
    opaque: p.opaque,
  };
}

const hashOf = (alg: DigestAlgorithm, s: string): string =>
  createHash(alg === 'MD5' ? 'md5' : 'sha256')
    .update(s)
    .digest('hex');

/** The expected `response` value (RFC 2617 §3.2.2.1 with the algorithm's hash). */
export function digestResponse(c: Omit<DigestCredentials, 'response'>, method: string, password: string): string {
  const ha1 = hashOf(c.algorithm, `${c.username}:${c.realm}:${password}`);
  const ha2 = hashOf(c.algorithm, `${method}:${c.uri}`);
  return c.qop ? hashOf(c.algorithm, `${ha1}:${c.nonce}:${c.nc}:${c.cnonce}:${c.qop}:${ha2}`) : hashOf(c.algorithm, `${ha1}:${c.nonce}:${ha2}`);
}

/**
 * A nonce's state at a request from `source`: ours, sealed for this realm and source address and
 * within its lifetime (`ttlMs`: what is left of it); `stale`: ours but past its lifetime; `invalid`:
 * forged, made up, for another realm, or issued to another address.
 */
export type NonceCheck = { state: 'valid'; ttlMs: number } | { state: 'stale' } | { state: 'invalid' };

/** Clock skew between nodes tolerated for a nonce's timestamp. */
const SKEW_MS = 5000;

export class NonceSealer {
  constructor(
    private readonly secret: string,
    readonly lifetimeMs = 300_000,
    private readonly now = () => Date.now(),
  ) {}

  /** A new nonce for a challenge sent to `source` (an IP address; an IPv6 one counts by its /64). */
  issue(realm: string, source: string): string {
    const head = `${this.now().toString(36)}.${randomBytes(6).toString('base64url')}`;
    return `${head}.${this.seal(head, realm, source)}`;
  }

  check(nonce: string, realm: string, source: string): NonceCheck {
    const m = /^([0-9a-z]{1,12}\.[A-Za-z0-9_-]{8})\.([A-Za-z0-9_-]{22})$/.exec(nonce);
    if (!m) return { state: 'invalid' };
    const expected = Buffer.from(this.seal(m[1]!, realm, source));
    const given = Buffer.from(m[2]!);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { state: 'invalid' };
    const age = this.now() - parseInt(m[1]!.slice(0, m[1]!.indexOf('.')), 36);
    return age >= -SKEW_MS && age <= this.lifetimeMs ? { state: 'valid', ttlMs: this.lifetimeMs - age + SKEW_MS } : { state: 'stale' };
  }

  private seal(head: string, realm: string, source: string): string {
    return createHmac('sha256', this.secret)
      .update(`${head}:${realm.toLowerCase()}:${sourceSubject(source)}`)
      .digest('base64url')
      .slice(0, 22);
  }
}

/**
 * The nonce count of an answer (RFC 7616 §3.4: 8 hex digits, from 1): with qop its `nc`, without qop
 * 1 (such a nonce is single-use). null when `nc` is not a count.
 */
export function nonceCount(c: DigestCredentials): number | null {
  if (!c.qop) return 1;
  if (!c.nc || !/^[0-9A-Fa-f]{1,8}$/.test(c.nc)) return null;
  const n = parseInt(c.nc, 16);
  return n >= 1 ? n : null;
}

/** One WWW-Authenticate value per algorithm, in the order given (RFC 8760 §2.4: most preferred first). */
export function challenges(realm: string, nonce: string, opts: { stale?: boolean; order?: readonly DigestAlgorithm[] } = {}): string[] {
  return (opts.order ?? DEFAULT_DIGEST_ALGORITHMS).map((alg) => `Digest realm="${realm}", nonce="${nonce}", algorithm=${alg}, qop="auth"${opts.stale ? ', stale=true' : ''}`);
}

/** Does the response match the password? Constant time over the hex digest. */
export function verifyResponse(c: DigestCredentials, method: string, password: string): boolean {
  const expected = Buffer.from(digestResponse(c, method, password));
  const given = Buffer.from(c.response);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
