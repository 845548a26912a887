// Locating a SIP server by DNS (RFC 3263 4.1, 4.2): for a host name without a port, NAPTR picks
// the transport (when the URI named none) and the SRV name, SRV (RFC 2782: lowest priority, then
// weighted random) the host and port, A the address. Without NAPTR, SRV is tried per transport;
// without SRV, the A record with the default port is used. Only the first target is used: no
// fail-over to the next SRV target when a transaction times out.
// Shared by sip-server (where a request goes) and media-app (where a customer's SIP destination
// would go, checked by the egress policy before the INVITE is sent).
import { Resolver } from 'node:dns/promises';

export type TransportName = 'udp' | 'tcp' | 'tls';

/** The lookups used; node's dns.promises.Resolver fits (tests point one at a loopback DNS server). */
export interface SipResolver {
  resolveNaptr(name: string): Promise<{ flags: string; service: string; regexp: string; replacement: string; order: number; preference: number }[]>;
  resolveSrv(name: string): Promise<{ name: string; port: number; priority: number; weight: number }[]>;
  resolve4(name: string): Promise<string[]>;
  resolve6?(name: string): Promise<string[]>;
}

export interface Located {
  transport: TransportName;
  host: string;
  port: number;
}

const NAPTR_SERVICE: Record<string, TransportName> = { 'SIP+D2U': 'udp', 'SIP+D2T': 'tcp', 'SIPS+D2T': 'tls' };
const SRV_PREFIX: Record<TransportName, string> = { udp: '_sip._udp.', tcp: '_sip._tcp.', tls: '_sips._tcp.' };

export function systemResolver(servers: string[] = []): SipResolver {
  const r = new Resolver({ timeout: 2000, tries: 2 });
  if (servers.length) r.setServers(servers);
  return r;
}

/**
 * Where to send for `host` (a name, no port in the URI). `transport` is the URI's explicit one
 * (transport param or sips), else undefined; `usable` lists the transports we can send on.
 * Undefined when DNS has no NAPTR/SRV answer: the caller then uses A with the default port.
 */
export async function locate(resolver: SipResolver, host: string, transport: TransportName | undefined, usable: TransportName[]): Promise<Located | undefined> {
  if (!transport) {
    const naptr = await resolver.resolveNaptr(host).catch(() => []);
    const picks = naptr
      .filter((n) => n.flags.toLowerCase() === 's' && NAPTR_SERVICE[n.service.toUpperCase()] && usable.includes(NAPTR_SERVICE[n.service.toUpperCase()]))
      .sort((a, b) => a.order - b.order || a.preference - b.preference);
    for (const n of picks) {
      const found = await srv(resolver, n.replacement, NAPTR_SERVICE[n.service.toUpperCase()]);
      if (found) return found;
    }
  }
  for (const t of transport ? [transport] : usable.filter((u) => u !== 'tls')) {
    const found = await srv(resolver, SRV_PREFIX[t] + host, t);
    if (found) return found;
  }
  return undefined;
}

async function srv(resolver: SipResolver, name: string, transport: TransportName): Promise<Located | undefined> {
  const records = await resolver.resolveSrv(name).catch(() => []);
  const best = pickSrv(records.filter((r) => r.name && r.name !== '.'));
  if (!best) return undefined;
  return { transport, host: best.name, port: best.port };
}

/** RFC 2782: the lowest priority; within it, a weighted random choice (weight 0 rarely chosen). */
export function pickSrv<T extends { priority: number; weight: number }>(records: T[], rand = Math.random): T | undefined {
  if (!records.length) return undefined;
  const top = Math.min(...records.map((r) => r.priority));
  const group = records.filter((r) => r.priority === top);
  const total = group.reduce((s, r) => s + r.weight, 0);
  if (total === 0) return group[0];
  let x = rand() * total;
  for (const r of group) {
    x -= r.weight;
    if (x < 0) return r;
  }
  return group[group.length - 1];
}
