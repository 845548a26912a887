/**
 * A SIP URI a customer gave as a destination (POST /calls, groupcalls, the flow's connect and call
 * actions, transfers, REFER targets, campaigns), located the way SIP locates a server (RFC 3263:
 * NAPTR and SRV for a name without a port, then A/AAAA; the maddr parameter wins over the host) and
 * every address it resolves to checked by the egress policy. The INVITE is then sent to the checked
 * address only (as the next hop), so a second, different DNS answer cannot steer it elsewhere.
 * Trunk and provider hosts are the operator's and are not checked here.
 */
import net from 'node:net';
import { locate, type SipResolver, type TransportName } from '../sip/locate';

export interface SipUriParts {
  scheme: 'sip' | 'sips';
  /** The host to locate: maddr when present, else the URI's host; brackets removed. */
  host: string;
  port: number | undefined;
  /** The transport the URI names (sips: or ;transport=), else undefined. */
  transport: TransportName | undefined;
}

/** The parts of `sip:user@host:port;params` (the scheme may be missing: sip:), or null. */
export function sipUriParts(target: string): SipUriParts | null {
  const t = target.trim();
  const m = /^(?:(sips?):)?(?:[^@\s]*@)?(\[[0-9A-Fa-f:.]+\]|[^:;?>\s[\]@]+)(?::(\d{1,5}))?((?:;[^?>\s]*)?)$/i.exec(t);
  if (!m) return null;
  const scheme = (m[1]?.toLowerCase() ?? 'sip') as 'sip' | 'sips';
  const params = new Map<string, string>();
  for (const p of (m[4] ?? '').split(';').filter(Boolean)) {
    const [k, v = ''] = p.split('=');
    params.set(k!.toLowerCase(), v);
  }
  const rawHost = params.get('maddr') || m[2]!;
  const host = rawHost.startsWith('[') ? rawHost.slice(1, -1) : rawHost;
  const tp = params.get('transport')?.toLowerCase();
  const transport: TransportName | undefined = scheme === 'sips' ? 'tls' : tp === 'udp' || tp === 'tcp' || tp === 'tls' ? tp : undefined;
  const port = m[3] ? Number(m[3]) : undefined;
  if (port !== undefined && (port < 1 || port > 65535)) return null;
  return { scheme, host: host.toLowerCase(), port, transport };
}

/** The egress policy as SIP destinations use it (core/net EgressPolicy). */
export interface SipEgress {
  /** The host's literal form (IP in any spelling, localhost, the platform's names) allowed? Throws (EgressRefused) when not. */
  assertHost(host: string, what?: string): string;
  /** Every A/AAAA address checked; the first one. Throws (EgressRefused, counted) when one is refused or none. */
  checkDestination(host: string): Promise<{ address: string }>;
}

/** A checked next hop: where the INVITE goes. */
export interface SipHop {
  transport: TransportName;
  address: string;
  port: number;
  /** As a SIP URI for the request's next hop (drachtio-srf's `proxy`). */
  uri: string;
}

export type SipRefusalReason = 'invalid_sip_uri' | 'unresolvable' | 'destination_not_allowed';

export type SipDestination = { ok: true; hop: SipHop } | { ok: false; reason: SipRefusalReason; message: string };

export interface LocateOptions {
  egress: SipEgress;
  /** NAPTR/SRV lookups (RFC 3263). */
  resolver: SipResolver;
  /** The transports sip-server sends on (NAPTR/SRV choices are limited to these). */
  usable?: TransportName[];
}

const defaultPort = (t: TransportName) => (t === 'tls' ? 5061 : 5060);

function hop(transport: TransportName, address: string, port: number): SipHop {
  const host = net.isIPv6(address) ? `[${address}]` : address;
  return { transport, address, port, uri: `sip:${host}:${port};transport=${transport}` };
}

function refused(err: unknown): SipDestination {
  const reason = (err as { reason?: unknown }).reason;
  if (typeof reason !== 'string') throw err;
  return { ok: false, reason: reason === 'unresolvable' ? 'unresolvable' : 'destination_not_allowed', message: (err as Error).message };
}

/**
 * The literal check of a customer's SIP URI, no DNS (validation at the API): null when it may be
 * dialled as far as its spelling tells, else why not.
 */
export function sipLiteralRefusal(target: string, egress: Pick<SipEgress, 'assertHost'>): SipDestination | null {
  const u = sipUriParts(target);
  if (!u) return { ok: false, reason: 'invalid_sip_uri', message: 'must be a SIP URI' };
  try {
    egress.assertHost(u.host, 'the SIP host');
    return null;
  } catch (err) {
    return refused(err);
  }
}

/** Locates `target` (a customer's SIP URI) and checks every address it resolves to. */
export async function locateSipDestination(target: string, o: LocateOptions): Promise<SipDestination> {
  const u = sipUriParts(target);
  if (!u) return { ok: false, reason: 'invalid_sip_uri', message: 'must be a SIP URI' };
  try {
    let transport: TransportName = u.transport ?? 'udp';
    let port = u.port ?? defaultPort(transport);
    let host = o.egress.assertHost(u.host, 'the SIP host');
    if (u.port === undefined && !net.isIP(host) && !/(^|\.)localhost\.?$/.test(host)) {
      const found = await locate(o.resolver, host, u.transport, o.usable ?? ['udp', 'tcp']);
      if (found) ({ transport, port, host } = found);
    }
    const { address } = await o.egress.checkDestination(host);
    return { ok: true, hop: hop(transport, address, port) };
  } catch (err) {
    return refused(err);
  }
}
