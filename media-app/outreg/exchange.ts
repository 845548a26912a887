/**
 * One REGISTER exchange (RFC 3261 §10.2) through sip-server: the request, and on 401/407 the same
 * request again with digest credentials (MD5 or SHA-256, media-app/kit/sip-digest.ts computes the
 * response). The outcome is the final status and, on 2xx, the expiry the registrar granted (the
 * `expires` of our Contact in the answer, else its Expires header, else what we asked for).
 */
import { randomBytes } from 'node:crypto';
import { digestResponse, parseDigest, type DigestAlgorithm } from '../kit/sip-digest';
import type { Srf } from '../kit/srf';

export interface RegisterTarget {
  /** Request-URI: sip:<domain>. */
  uri: string;
  /** Where it is sent (a checked next hop for a customer's registrar), drachtio-srf's `proxy`. */
  proxy: string;
  aor: string;
  /** Our Contact URI (sip:<contact user>@<advertised host:port>). */
  contact: string;
  contactUser: string;
  username: string;
  password: string;
  callId: string;
  fromTag: string;
}

export type RegisterOutcome = { ok: true; status: number; grantedSec: number } | { ok: false; status: number; reason: string };

interface SentRequest {
  on(event: 'response', fn: (res: ReceivedResponse) => void): void;
}
interface ReceivedResponse {
  status: number;
  reason?: string;
  get(name: string): string | undefined;
}
type RequestFn = (uri: string, opts: object, cb: (err: Error | null, sent: SentRequest) => void) => void;

/** What drachtio-srf's request() is at run time (its declarations give it another shape). */
function requestFn(srf: Srf): RequestFn {
  const r: unknown = Reflect.get(srf, 'request');
  if (typeof r !== 'function') throw new Error('srf.request is missing');
  return (uri, opts, cb) => void Reflect.apply(r, srf, [uri, opts, cb]);
}

/** Sends REGISTER (expires 0 removes the binding); bounded by timeoutMs (then status 408). */
export async function register(srf: Srf, t: RegisterTarget, cseq: () => number, expiresSec: number, timeoutMs: number): Promise<RegisterOutcome> {
  const send = requestFn(srf);
  const once = (auth: Record<string, string>) =>
    new Promise<ReceivedResponse | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), timeoutMs);
      const done = (r: ReceivedResponse | null) => {
        clearTimeout(timer);
        resolve(r);
      };
      send(
        t.uri,
        {
          method: 'REGISTER',
          proxy: t.proxy,
          headers: {
            From: `<${t.aor}>;tag=${t.fromTag}`,
            To: `<${t.aor}>`,
            'Call-ID': t.callId,
            CSeq: `${cseq()} REGISTER`,
            Contact: `<${t.contact}>`,
            Expires: String(expiresSec),
            ...auth,
          },
        },
        (err, sent) => {
          if (err) return done(null);
          sent.on('response', (res) => {
            if (res.status >= 200) done(res);
          });
        },
      );
    });
  let res = await once({});
  for (let round = 0; res && (res.status === 401 || res.status === 407) && round < 2; round++) {
    const header = res.get(res.status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate');
    const auth = answerChallenge(header, t, 'REGISTER');
    if (!auth) break;
    res = await once({ [res.status === 401 ? 'Authorization' : 'Proxy-Authorization']: auth });
    if (res && (res.status === 401 || res.status === 407) && !/stale\s*=\s*"?true/i.test(res.get(res.status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate') ?? '')) break;
  }
  if (!res) return { ok: false, status: 408, reason: 'Request Timeout' };
  if (res.status >= 300) return { ok: false, status: res.status, reason: res.reason ?? '' };
  return { ok: true, status: res.status, grantedSec: grantedExpiry(res, t.contactUser, expiresSec) };
}

/** The Authorization value for a challenge (the first MD5 or SHA-256 one), or null. */
export function answerChallenge(header: string | undefined, t: Pick<RegisterTarget, 'uri' | 'username' | 'password'>, method: string): string | null {
  // several challenges may be joined in one value: split before each "Digest"
  const offers = (header ?? '')
    .split(/,?\s*(?=Digest\s)/i)
    .map((h) => parseDigest(h))
    .filter((p): p is Record<string, string> => !!p);
  const p = offers.find((o) => ['MD5', 'SHA-256'].includes((o.algorithm ?? 'MD5').toUpperCase()));
  if (!p || !p.realm || !p.nonce) return null;
  const algorithm = (p.algorithm ?? 'MD5').toUpperCase() as DigestAlgorithm;
  const qop = p.qop
    ?.split(',')
    .map((q) => q.trim())
    .includes('auth')
    ? 'auth'
    : undefined;
  const c = { username: t.username, realm: p.realm, nonce: p.nonce, uri: t.uri, algorithm, qop, nc: qop ? '00000001' : undefined, cnonce: qop ? randomBytes(8).toString('hex') : undefined };
  const response = digestResponse(c, method, t.password);
  const q = (v: string) => `"${v.replace(/["\\]/g, '\\$&')}"`;
  const parts = [`username=${q(c.username)}`, `realm=${q(c.realm)}`, `nonce=${q(c.nonce)}`, `uri=${q(c.uri)}`, `response="${response}"`, `algorithm=${algorithm}`];
  if (qop) parts.push(`qop=auth`, `nc=${c.nc}`, `cnonce="${c.cnonce}"`);
  if (p.opaque) parts.push(`opaque=${q(p.opaque)}`);
  return `Digest ${parts.join(', ')}`;
}

/** The expiry granted to our contact (RFC 3261 §10.2.4): its expires parameter, else Expires, else asked. */
export function grantedExpiry(res: Pick<ReceivedResponse, 'get'>, contactUser: string, asked: number): number {
  for (const c of splitContacts(res.get('Contact') ?? '')) {
    if (!c.includes(`${contactUser}@`)) continue;
    const m = /;\s*expires\s*=\s*(\d+)/i.exec(c.slice(c.indexOf('>') + 1));
    if (m) return Number(m[1]);
  }
  const e = /^\s*(\d+)\s*$/.exec(res.get('Expires') ?? '');
  return e ? Number(e[1]) : asked;
}

function splitContacts(v: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inAngle = false;
  let inQuote = false;
  for (const ch of v) {
    if (ch === '"' && !inAngle) inQuote = !inQuote;
    else if (ch === '<' && !inQuote) inAngle = true;
    else if (ch === '>' && !inQuote) inAngle = false;
    if (ch === ',' && !inAngle && !inQuote) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}
