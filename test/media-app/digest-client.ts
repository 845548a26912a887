// A raw digest client over UdpSip: REGISTER text and Authorization values for MD5 or SHA-256.
import { createHash } from 'node:crypto';
import { parseDigest } from '../../media-app/kit/sip-digest';
import type { SipReply, UdpSip } from '../../testkit/media-app/harness';

let cseq = 0;

/** A REGISTER for `user@domain` from the client's loopback port (`extra`: one more header line). */
export function rawRegister(u: UdpSip, user: string, domain: string, extra = '', expires = 3600): string {
  const n = ++cseq;
  return [
    `REGISTER sip:${domain} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${u.port};branch=z9hG4bK-r${n}-${Date.now()}`,
    `From: <sip:${user}@${domain}>;tag=f${n}`,
    `To: <sip:${user}@${domain}>`,
    `Call-ID: raw-${u.port}@127.0.0.1`,
    `CSeq: ${n} REGISTER`,
    `Contact: <sip:${user}@127.0.0.1:${u.port}>`,
    `Expires: ${expires}`,
    'Max-Forwards: 70',
    ...(extra ? [extra] : []),
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

/** The challenge values of a reply, in order. */
export const challengesOf = (r: SipReply, header = 'www-authenticate'): string[] => r.headers.filter(([k]) => k === header).map(([, v]) => v);

/** An Authorization header line answering `chal` (its algorithm) with qop=auth. */
export function authorization(chal: string, user: string, password: string, uri: string, wrong = false, method = 'REGISTER'): string {
  const p = parseDigest(chal)!;
  const alg = p.algorithm!;
  const h = (s: string) =>
    createHash(alg === 'MD5' ? 'md5' : 'sha256')
      .update(s)
      .digest('hex');
  const cnonce = 'abc123';
  const nc = '00000001';
  const ha1 = h(`${user}:${p.realm}:${wrong ? password + 'x' : password}`);
  const ha2 = h(`${method}:${uri}`);
  const response = h(`${ha1}:${p.nonce}:${nc}:${cnonce}:auth:${ha2}`);
  return `Authorization: Digest username="${user}", realm="${p.realm}", nonce="${p.nonce}", uri="${uri}", response="${response}", algorithm=${alg}, cnonce="${cnonce}", nc=${nc}, qop=auth`;
}
