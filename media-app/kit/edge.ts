/**
 * Requests that come through the edge (Kamailio in front of several nodes, deploy/kamailio/): the
 * edge writes `X-Openvoice-Source: <proto>:<ip>:<port>`, the address it received the request from,
 * after removing any copy the client sent. A node believes that header only when the request's own
 * source is one of SIP_TRUSTED_PROXIES; then `req.source_address`, `source_port` and `protocol` are
 * replaced by the real source before any handler runs (trunk and provider identification by
 * address, REGISTER lockout, bindings), and `edgeOf(req)` gives the edge's own address. From any
 * other source the header is ignored (a client cannot pick the address it is judged by).
 */
import { allowlisted, parseIp, type Cidr } from '../../core/net/address';
import type { SrfRequest, SrfResponse } from './srf';

export const SOURCE_HEADER = 'X-Openvoice-Source';

export interface Hop {
  address: string;
  port: number;
  protocol: string;
}

const edges = new WeakMap<SrfRequest, Hop>();

/** The edge a request came through (null: it came straight from its sender). */
export function edgeOf(req: SrfRequest): Hop | null {
  return edges.get(req) ?? null;
}

/** `udp:192.0.2.1:5060`, `tcp:[2001:db8::1]:5061`, `udp:2001:db8::1:5060`: the sender, or null when malformed. */
export function parseSourceHeader(v: string | undefined): Hop | null {
  const m = /^\s*(udp|tcp|tls|ws|wss|sctp):\[?([0-9A-Fa-f:.]+?)\]?:(\d{1,5})\s*$/i.exec(v ?? '');
  if (!m || !parseIp(m[2]!)) return null;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return null;
  return { protocol: m[1]!.toLowerCase(), address: m[2]!, port };
}

export function isTrustedProxy(address: string, trusted: readonly Cidr[]): boolean {
  const ip = trusted.length ? parseIp(address) : null;
  return !!ip && allowlisted(ip, trusted);
}

/** srf middleware: swaps in the real source of requests relayed by a trusted edge. */
export function trustedEdge(trusted: readonly Cidr[]) {
  return (req: SrfRequest, _res: SrfResponse, next: () => void): void => {
    if (trusted.length && isTrustedProxy(req.source_address, trusted)) {
      const real = parseSourceHeader(req.get(SOURCE_HEADER));
      if (real) {
        edges.set(req, { address: req.source_address, port: Number(req.source_port), protocol: req.protocol });
        req.source_address = real.address;
        req.source_port = String(real.port);
        req.protocol = real.protocol;
      }
    }
    next();
  };
}
