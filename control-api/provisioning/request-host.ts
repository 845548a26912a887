/**
 * The host a phone used to fetch its document (the Host header), for the outbound proxy when no
 * SIP_ADVERTISED_HOST or PROVISIONING_SIP_PROXY is set: a DNS name or an IPv4/IPv6 address, the port
 * stripped, lowercased; anything else is null (the router answers 400, it is never written into a
 * document).
 */
import { isIP } from 'node:net';

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOSTNAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

export function hostOfRequest(header: string | undefined): string | null {
  if (typeof header !== 'string') return null;
  const h = header.trim().toLowerCase();
  const v6 = /^\[([0-9a-f:.]+)\](?::([0-9]{1,5}))?$/.exec(h);
  if (v6) return isIP(v6[1]!) === 6 && portOk(v6[2]) ? v6[1]! : null;
  const m = /^([^:]+)(?::([0-9]{1,5}))?$/.exec(h);
  if (!m || !portOk(m[2])) return null;
  const host = m[1]!.replace(/\.$/, '');
  if (isIP(host) === 4) return host;
  // A name: labels of letters, digits and hyphens; not all digits and dots (that is a bad IPv4 address).
  if (host.length > 253 || !HOSTNAME.test(host) || /^[0-9.]+$/.test(host)) return null;
  return host;
}

function portOk(p: string | undefined): boolean {
  return p === undefined || (Number(p) >= 1 && Number(p) <= 65535);
}
