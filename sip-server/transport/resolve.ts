// Next-hop selection (RFC 3263-lite: numeric IPs and DNS A lookups, no NAPTR/SRV) and
// response routing by Via (RFC 3261 18.2.2, RFC 3581).
import dns from 'node:dns/promises';
import net from 'node:net';
import { SipRequest, SipUri, TransportName, Via, parseUri } from '../message';
import type { Destination } from '../transaction/context';

/** A next hop before name resolution. */
export interface Target {
  transport?: TransportName;
  /** Hostname or numeric address (IPv6 with or without brackets). */
  host: string;
  port?: number;
}

function transportOf(uri: SipUri): TransportName {
  if (uri.scheme === 'sips') return 'tls';
  const t = uri.transportParam;
  return t === 'tcp' ? 'tcp' : t === 'tls' ? 'tls' : 'udp';
}

/** Target for a SIP URI (the maddr parameter wins over the host). */
export function targetFromUri(uri: SipUri): Target {
  const transport = transportOf(uri);
  const maddr = uri.params.maddr;
  return { transport, host: maddr ?? uri.host, port: uri.port ?? (transport === 'tls' ? 5061 : 5060) };
}

/**
 * Where a request goes when the TU gives no explicit target: the first Route if it is a loose
 * router (";lr"), else the Request-URI (RFC 3261 8.1.2, 16.12).
 */
export function targetForRequest(req: SipRequest): Target {
  const routes = req.routes;
  if (routes.length && routes[0].uri instanceof SipUri) return targetFromUri(routes[0].uri);
  const ruri = req.requestUri;
  if (!(ruri instanceof SipUri)) throw new Error(`cannot route to a ${ruri.scheme}: URI`);
  return targetFromUri(ruri);
}

/** Parse a string target: a SIP URI or "host[:port]". */
export function parseTarget(t: string | SipUri | Target): Target {
  if (t instanceof SipUri) return targetFromUri(t);
  if (typeof t !== 'string') return t;
  if (/^sips?:/i.test(t)) return targetFromUri(parseUri(t) as SipUri);
  const m = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(t);
  if (!m) throw new Error(`bad target: ${t}`);
  return { host: m[1], port: m[2] ? Number(m[2]) : undefined };
}

/** Resolve a target to a numeric destination (A/AAAA lookup for names). */
export async function resolveTarget(t: Target): Promise<Destination> {
  const transport = t.transport ?? 'udp';
  let host = t.host.startsWith('[') ? t.host.slice(1, -1) : t.host;
  if (!net.isIP(host)) {
    const r = await dns.lookup(host, { family: 4 }).catch(() => dns.lookup(host));
    host = r.address;
  }
  return { transport, address: host, port: t.port ?? (transport === 'tls' ? 5061 : 5060) };
}

/**
 * Where responses to a request go: the connection it came on (stream transports), else
 * maddr, else received/rport, else the Via sent-by (RFC 3261 18.2.2, RFC 3581 4).
 */
export function responseDestination(via: Via, src?: { transport: TransportName; address: string; port: number; connectionId?: string }): Destination {
  const viaTransport = via.transport.toLowerCase();
  const transport: TransportName = src?.transport ?? (viaTransport === 'tcp' ? 'tcp' : viaTransport === 'tls' ? 'tls' : 'udp');
  if (transport !== 'udp' && src) {
    return { transport, address: src.address, port: src.port, connectionId: src.connectionId };
  }
  const host = via.host.startsWith('[') ? via.host.slice(1, -1) : via.host;
  if (via.maddr) return { transport, address: via.maddr, port: via.port ?? 5060 };
  const rport = via.rport;
  const address = via.received ?? host;
  const port = typeof rport === 'number' && Number.isFinite(rport) ? rport : via.port ?? (transport === 'tls' ? 5061 : 5060);
  return { transport, address, port };
}
