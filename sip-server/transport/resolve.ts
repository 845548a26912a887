// Next-hop selection (numeric IPs; for names: RFC 3263 NAPTR/SRV when the URI has no port, see
// core/sip/locate.ts, else A) and response routing by Via (RFC 3261 18.2.2, RFC 3581).
import dns from 'node:dns/promises';
import net from 'node:net';
import { SipRequest, SipUri, TransportName, Via, parseUri } from '../message';
import type { Destination } from '../transaction/context';
import { locate, type SipResolver } from '../../core/sip/locate';
import { FlowFailedError } from './ws';

/** A next hop before name resolution. */
export interface Target {
  transport?: TransportName;
  /** Hostname or numeric address (IPv6 with or without brackets). */
  host: string;
  port?: number;
  /** the URI gave a name and no port: RFC 3263 NAPTR/SRV lookups apply */
  locate?: boolean;
  /** the URI named the transport (transport param or sips:), so NAPTR may not choose it */
  explicitTransport?: boolean;
  /** tcp/tls: the connection to use while it is open (the one the peer opened; RFC 5923's aim) */
  connectionId?: string;
}

export interface ResolveOptions {
  resolver: SipResolver;
  /** transports we can send on (NAPTR/SRV choices are limited to these) */
  usable: ('udp' | 'tcp' | 'tls')[];
}

/** The transport a URI asks for: ;transport=ws is wss under sips: (RFC 7118 §5.2); ;transport=wss is read too. */
export function transportOfUri(uri: SipUri): TransportName {
  const t = uri.transportParam;
  if (t === 'ws' || t === 'wss') return uri.scheme === 'sips' || t === 'wss' ? 'wss' : 'ws';
  if (uri.scheme === 'sips') return 'tls';
  return t === 'tcp' ? 'tcp' : t === 'tls' ? 'tls' : 'udp';
}

/** The port a transport uses when a URI names none (RFC 3261 19.1.2, RFC 7118 §5.2). */
export function defaultPort(t: TransportName): number {
  return t === 'tls' ? 5061 : t === 'ws' ? 80 : t === 'wss' ? 443 : 5060;
}

/** WebSocket transports: only connections the peer opened carry them (no DNS, no dialling). */
export function isWebSocket(t: TransportName | undefined): t is 'ws' | 'wss' {
  return t === 'ws' || t === 'wss';
}

/** Target for a SIP URI (the maddr parameter wins over the host). */
export function targetFromUri(uri: SipUri): Target {
  const transport = transportOfUri(uri);
  const maddr = uri.params.maddr;
  const host = maddr ?? uri.host;
  return {
    transport,
    host,
    port: uri.port ?? defaultPort(transport),
    locate: uri.port === undefined && !isWebSocket(transport) && host.toLowerCase() !== 'localhost' && !net.isIP(host.startsWith('[') ? host.slice(1, -1) : host),
    explicitTransport: uri.scheme === 'sips' || !!uri.transportParam,
  };
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

/**
 * Resolve a target to a numeric destination: NAPTR/SRV first when the target asks for it and a
 * resolver is given (RFC 3263), else an A/AAAA lookup of the name with the target's port.
 */
export async function resolveTarget(t: Target, opts?: ResolveOptions): Promise<Destination> {
  const transport = t.transport ?? 'udp';
  const host = t.host.startsWith('[') ? t.host.slice(1, -1) : t.host;
  if (net.isIP(host)) return { transport, address: host, port: t.port ?? defaultPort(transport), ...(t.connectionId ? { connectionId: t.connectionId } : {}) };
  // a WebSocket client's Contact host is a made-up *.invalid name: only its flow reaches it
  if (isWebSocket(transport)) throw new FlowFailedError(`${transport} target ${t.host} names no open connection`);
  if (t.locate && opts) {
    const found = await locate(opts.resolver, host, t.explicitTransport && !isWebSocket(transport) ? transport : undefined, opts.usable);
    if (found) {
      const address = net.isIP(found.host) ? found.host : await addressOf(found.host, opts.resolver, true);
      return { transport: found.transport, address, port: found.port };
    }
  }
  return { transport, address: await addressOf(host, opts?.resolver, false), port: t.port ?? defaultPort(transport) };
}

/** A record of a name: the system's lookup (hosts file) and the SIP resolver, in either order. */
async function addressOf(name: string, resolver: SipResolver | undefined, resolverFirst: boolean): Promise<string> {
  const system = () =>
    dns
      .lookup(name, { family: 4 })
      .catch(() => dns.lookup(name))
      .then((r) => r.address);
  const viaResolver = async () => {
    if (!resolver) throw new Error(`cannot resolve ${name}`);
    const a = await resolver.resolve4(name);
    if (!a.length) throw new Error(`no address for ${name}`);
    return a[0];
  };
  return resolverFirst ? viaResolver().catch(system) : system().catch(viaResolver);
}

/**
 * Where responses to a request go: the connection it came on (stream transports), else
 * maddr, else received/rport, else the Via sent-by (RFC 3261 18.2.2, RFC 3581 4).
 */
export function responseDestination(via: Via, src?: { transport: TransportName; address: string; port: number; connectionId?: string }): Destination {
  const viaTransport = via.transport.toLowerCase();
  const named = (['tcp', 'tls', 'ws', 'wss'] as const).find((t) => t === viaTransport);
  const transport: TransportName = src?.transport ?? named ?? 'udp';
  if (transport !== 'udp' && src) {
    return { transport, address: src.address, port: src.port, connectionId: src.connectionId };
  }
  const host = via.host.startsWith('[') ? via.host.slice(1, -1) : via.host;
  if (via.maddr) return { transport, address: via.maddr, port: via.port ?? 5060 };
  const rport = via.rport;
  const address = via.received ?? host;
  const port = typeof rport === 'number' && Number.isFinite(rport) ? rport : (via.port ?? defaultPort(transport));
  return { transport, address, port };
}
