/**
 * SIP digest authentication (RFC 3261 §22, RFC 8760): challenges for MD5 and SHA-256 with qop=auth,
 * and the check of an Authorization header. Nonces are stateless (a timestamp sealed with an HMAC
 * under a secret every media-app node shares), so a challenge from one node verifies on another.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

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

const hashOf = (alg: DigestAlgorithm, s: string): string => createHash(alg === 'MD5' ? 'md5' : 'sha256').update(s).digest('hex');

/** The expected `response` value (RFC 2617 §3.2.2.1 with the algorithm's hash). */
export function digestResponse(c: Omit<DigestCredentials, 'response'>, method: string, password: string): string {
  const ha1 = hashOf(c.algorithm, `${c.username}:${c.realm}:${password}`);
  const ha2 = hashOf(c.algorithm, `${method}:${c.uri}`);
  return c.qop
    ? hashOf(c.algorithm, `${ha1}:${c.nonce}:${c.nc}:${c.cnonce}:${c.qop}:${ha2}`)
    : hashOf(c.algorithm, `${ha1}:${c.nonce}:${ha2}`);
}

export type NonceState = 'valid' | 'stale' | 'invalid';

export class NonceSealer {
  constructor(private readonly secret: string, private readonly lifetimeMs = 300_000, private readonly now = () => Date.now()) {}

  issue(realm: string): string {
    const ts = this.now().toString(36);
    return `${ts}.${this.seal(ts, realm)}`;
  }

  check(nonce: string, realm: string): NonceState {
    const m = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{22})$/.exec(nonce);
    if (!m) return 'invalid';
    const expected = Buffer.from(this.seal(m[1]!, realm));
    const given = Buffer.from(m[2]!);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return 'invalid';
    const age = this.now() - parseInt(m[1]!, 36);
    return age >= -5000 && age <= this.lifetimeMs ? 'valid' : 'stale';
  }

  private seal(ts: string, realm: string): string {
    return createHmac('sha256', this.secret).update(`${ts}:${realm.toLowerCase()}`).digest('base64url').slice(0, 22);
  }
}

/** One WWW-Authenticate value per algorithm, in the order given (RFC 8760 §2.4: most preferred first). */
export function challenges(realm: string, nonce: string, opts: { stale?: boolean; order?: readonly DigestAlgorithm[] } = {}): string[] {
  return (opts.order ?? DEFAULT_DIGEST_ALGORITHMS).map(
    (alg) => `Digest realm="${realm}", nonce="${nonce}", algorithm=${alg}, qop="auth"${opts.stale ? ', stale=true' : ''}`,
  );
}

/** Does the response match the password? Constant time over the hex digest. */
export function verifyResponse(c: DigestCredentials, method: string, password: string): boolean {
  const expected = Buffer.from(digestResponse(c, method, password));
  const given = Buffer.from(c.response);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
