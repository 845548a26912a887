/**
 * Calls to the customer's own +899 virtual numbers stay on the platform: the outgoing leg's INVITE
 * goes to our own sip-server (the listening point it announced over the drachtio protocol), carrying
 * a token that names the outgoing call row and is signed with the platform secret. The inbound
 * router (inbound/router.ts) takes such an INVITE as a call from that customer to the number and runs
 * the number's flow: a real second leg with real audio, no provider, no charge, no egress check (the
 * destination is the platform itself, never a customer-given host).
 *
 * The token is `<call id>.<HMAC-SHA256(secret, "internal-call|<call id>|<number>")>`; the router also
 * requires the named row to be a live outgoing call of the number's owner to that very number, so a
 * token cannot be minted outside the platform nor replayed once its call is over.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../core/config';
import { sipHostports, type Srf } from '../srf';

export const INTERNAL_CALL_HEADER = 'X-Openvoice-Internal-Call';

function mac(secret: string, callId: string, number: string): string {
  return createHmac('sha256', secret).update(`internal-call|${callId}|${number}`).digest('base64url');
}

export function internalCallToken(secret: string, callId: string, number: string): string {
  return `${callId}.${mac(secret, callId, number)}`;
}

/** The call id a token names when its signature holds for `number`, else null. */
export function verifyInternalCallToken(secret: string, token: string | undefined, number: string): string | null {
  const m = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})$/.exec((token ?? '').trim());
  if (!m) return null;
  const want = Buffer.from(mac(secret, m[1]!, number));
  const got = Buffer.from(m[2]!);
  return want.length === got.length && timingSafeEqual(want, got) ? m[1]! : null;
}

/** Our sip-server as a next hop (UDP preferred), from the listening points it announced. */
export function ownSipHop(srf: Srf): string | null {
  const points = sipHostports(srf)
    .map((h) => /^(udp|tcp)\/(\[[^\]]+\]|[^:]+):(\d+)$/i.exec(h))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => (a[1]!.toLowerCase() === 'udp' ? 0 : 1) - (b[1]!.toLowerCase() === 'udp' ? 0 : 1));
  const m = points[0];
  if (!m) return null;
  // a wildcard listening address is reached on the loopback of this host
  const host = m[2] === '0.0.0.0' ? '127.0.0.1' : m[2] === '[::]' ? '[::1]' : m[2]!;
  return `sip:${host}:${m[3]};transport=${m[1]!.toLowerCase()}`;
}

/** Where the outgoing leg `callId` to the own virtual number `number` is sent, or null when sip-server announced no listening point. */
export function internalTarget(deps: { srf: Srf; config: Readonly<Config> }, number: string, callId: string): { uri: string; proxy: string; headers: Record<string, string> } | null {
  const proxy = ownSipHop(deps.srf);
  if (!proxy) return null;
  return {
    uri: `sip:${number}@${deps.config.sipDomain}`,
    proxy,
    headers: { [INTERNAL_CALL_HEADER]: internalCallToken(deps.config.jwtSecret, callId, number) },
  };
}
