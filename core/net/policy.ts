/**
 * The egress policy: may the platform connect to this host on a customer's behalf? A destination
 * is allowed when every address its name resolves to is public and not one of this host's own
 * addresses, or lies in the operator's allowlist (EGRESS_ALLOW_CIDRS). The answer is pinned: the
 * socket connects to the address that was checked (CheckedAddress.lookup), never to a second lookup.
 *
 * The platform's own addresses (interfaces of this host, PUBLIC_URL's host, SIP_ADVERTISED_HOST)
 * are refused even when the allowlist covers them; loopback is refused as loopback, so an operator
 * who allowlists 127.0.0.0/8 (a local LLM, the test suites) opens loopback knowingly.
 */
import dns from 'node:dns';
import os from 'node:os';
import type net from 'node:net';
import { allowlisted, classify, embeddedIPv4, formatIp, ipLiteral, isLocalhostName, normalizeHost, parseCidrList, parseIp, sameIp, type Cidr, type IpBytes } from './address';
import { describeClass, EgressRefused, type RefusalReason } from './errors';
import { egressFetch, egressOpen, type EgressRequest, type EgressResponse, type EgressStream } from './http';
import { platformMetrics } from '../metrics';

/** A connection attempt: a refusal is counted once (egress_refusals_total{reason}) and passed on. */
async function counted<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof EgressRefused) platformMetrics.egressRefusals.labels(e.reason).inc();
    throw e;
  }
}

/** What the policy is built from (core/config.ts reads it from the environment). */
export interface EgressSettings {
  /** EGRESS_ALLOW_CIDRS: ranges reachable whatever their class. */
  allowCidrs: readonly string[];
  /** EGRESS_DNS_SERVERS: "ip" or "ip:port" resolvers used instead of the system's (empty: dns.lookup, /etc/hosts honoured). */
  dnsServers: readonly string[];
  /** Names or addresses that are this platform (PUBLIC_URL's host, SIP_ADVERTISED_HOST). */
  selfHosts: readonly string[];
}

export interface CheckedAddress {
  /** The host as asked, normalised (brackets off, lower case). */
  host: string;
  address: string;
  family: 4 | 6;
  /** A `lookup` for net/http/https/ws options: always answers the checked address. */
  lookup: net.LookupFunction;
}

const DNS_SERVER = /^(\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?|\[[0-9a-f:.]+\](:\d{1,5})?|[0-9a-f:]*:[0-9a-f:.]+)$/i;

/** EGRESS_* from the environment, validated. Throws an Error whose message names the variable. */
export function egressSettingsFromEnv(env: NodeJS.ProcessEnv): EgressSettings {
  const allow = env.EGRESS_ALLOW_CIDRS ?? '';
  try {
    parseCidrList(allow);
  } catch (e) {
    throw new Error(`EGRESS_ALLOW_CIDRS: ${(e as Error).message}`);
  }
  const dnsServers = (env.EGRESS_DNS_SERVERS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = dnsServers.find((s) => !DNS_SERVER.test(s));
  if (bad !== undefined) throw new Error(`EGRESS_DNS_SERVERS: ${JSON.stringify(bad)} is not an IP address with an optional :port`);
  const selfHosts: string[] = [];
  try {
    if (env.PUBLIC_URL) selfHosts.push(new URL(env.PUBLIC_URL).hostname);
  } catch {
    /* PUBLIC_URL is validated by core/config.ts */
  }
  if (env.SIP_ADVERTISED_HOST) selfHosts.push(env.SIP_ADVERTISED_HOST.trim());
  return {
    allowCidrs: allow
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    dnsServers,
    selfHosts,
  };
}

function pinned(address: string, family: 4 | 6): net.LookupFunction {
  return (_host, options, callback) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

function interfaceAddresses(): IpBytes[] {
  const out: IpBytes[] = [];
  for (const list of Object.values(os.networkInterfaces()))
    for (const i of list ?? []) {
      const a = parseIp(i.address);
      if (a) out.push(a);
    }
  return out;
}

const bare = (h: string) => h.toLowerCase().replace(/\.$/, '');

/** Is `a`, or the IPv4 address an IPv6 form of it carries (mapped, NAT64, 6to4...), one of `list`? */
function isOneOf(a: IpBytes, list: readonly IpBytes[]): boolean {
  const inner = embeddedIPv4(a);
  return list.some((s) => sameIp(s, a) || (inner !== null && sameIp(s, inner)));
}

export class EgressPolicy {
  private readonly allow: Cidr[];
  private readonly resolver: dns.promises.Resolver | null;
  private readonly selfNames: Set<string>;
  private readonly selfAddrs: IpBytes[];
  private selfResolved: Promise<IpBytes[]> | null = null;

  constructor(readonly settings: EgressSettings) {
    this.allow = parseCidrList(settings.allowCidrs.join(','));
    this.resolver = settings.dnsServers.length ? new dns.promises.Resolver({ timeout: 2000, tries: 2 }) : null;
    this.resolver?.setServers([...settings.dnsServers]);
    this.selfNames = new Set();
    // loopback is refused by its class; the self list is the host's other addresses
    this.selfAddrs = interfaceAddresses().filter((a) => classify(a) !== 'loopback');
    for (const h of settings.selfHosts) {
      const lit = parseIp(h);
      if (lit) {
        if (classify(lit) !== 'loopback') this.selfAddrs.push(lit);
      } else if (h) this.selfNames.add(bare(h));
    }
  }

  /** Why `ip` may not be connected to, or null when it may. Synchronous; the self names' addresses are checked by resolveAndCheck. */
  verdict(ip: string | IpBytes): RefusalReason | null {
    const a = typeof ip === 'string' ? parseIp(ip) : ip;
    if (!a) return 'url';
    if (isOneOf(a, this.selfAddrs)) return 'self';
    if (allowlisted(a, this.allow)) return null;
    const k = classify(a);
    return k === 'public' ? null : k;
  }

  /** Refuses a host whose literal form (IP, localhost name, one of the platform's names) is not allowed. No DNS. Returns the normalised host. */
  assertHost(host: string, what = 'the host'): string {
    let h: string;
    try {
      h = normalizeHost(host);
    } catch {
      throw new EgressRefused('url', `${what} is not a valid host name or address`);
    }
    if (!h) throw new EgressRefused('url', `${what} is empty`);
    if (this.selfNames.has(bare(h))) throw new EgressRefused('self', `${what} is this platform itself, which is not allowed`);
    const lit = ipLiteral(h);
    if (lit) {
      const r = this.verdict(lit);
      if (r) throw refusal(r, `${what} is`);
    } else if (isLocalhostName(h) && this.verdict('127.0.0.1')) {
      throw refusal('loopback', `${what} is`);
    }
    return h;
  }

  /**
   * Validation-time check of a URL the platform will fetch (no DNS): http or https, no
   * user:password@, a host whose literal form is allowed. Returns the parsed URL.
   */
  assertUrlSyntax(input: string | URL, what = 'the URL'): URL {
    let u: URL;
    try {
      u = new URL(String(input));
    } catch {
      throw new EgressRefused('url', `${what} is not a valid URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new EgressRefused('scheme', `${what} must use http or https`);
    if (u.username || u.password) throw new EgressRefused('credentials', `${what} must not carry a user name or password`);
    this.assertHost(u.hostname, `${what}'s host`);
    return u;
  }

  /**
   * Resolves `host` (a literal is taken as is), refuses it unless every address is allowed, and
   * returns the first one with a `lookup` pinned to it. Throws EgressRefused.
   */
  async resolveAndCheck(host: string): Promise<CheckedAddress> {
    const h = this.assertHost(host, 'the destination');
    const lit = ipLiteral(h);
    const addrs: IpBytes[] = lit ? [parseIp(lit)!] : await this.resolve(h);
    if (!addrs.length) throw new EgressRefused('unresolvable', 'the destination host name could not be resolved');
    const self = await this.selfAddresses();
    for (const a of addrs) {
      if (isOneOf(a, self)) throw new EgressRefused('self', 'the destination is this platform itself, which is not allowed');
      const r = this.verdict(a);
      // a name's addresses are not shown (they would tell what an internal name resolves to)
      if (r) throw lit ? refusal(r, 'the destination is') : new EgressRefused(r, 'the destination host name resolves to an address that is not allowed');
    }
    const first = addrs[0]!;
    const address = formatIp(first);
    return { host: h, address, family: first.family, lookup: pinned(address, first.family) };
  }

  /**
   * resolveAndCheck for a destination the caller connects to itself (a SIP next hop, a WebSocket of
   * a media stream): a refusal is counted in egress_refusals_total like an HTTP one.
   */
  checkDestination(host: string): Promise<CheckedAddress> {
    return counted(this.resolveAndCheck(host));
  }

  /** HTTP(S) through the policy, whole body read (bounded). See http.ts. */
  fetch(url: string | URL, req?: EgressRequest): Promise<EgressResponse> {
    return counted(egressFetch(this, url, req));
  }

  /** HTTP(S) through the policy, body streamed (bounded). See http.ts. */
  open(url: string | URL, req?: EgressRequest): Promise<EgressStream> {
    return counted(egressOpen(this, url, req));
  }

  private async resolve(host: string): Promise<IpBytes[]> {
    const name = host.replace(/\.$/, '') || host;
    let texts: string[];
    try {
      if (!this.resolver) {
        texts = (await dns.promises.lookup(name, { all: true, verbatim: true })).map((a) => a.address);
      } else {
        const [a, aaaa] = await Promise.allSettled([this.resolver.resolve4(name), this.resolver.resolve6(name)]);
        texts = [...(a.status === 'fulfilled' ? a.value : []), ...(aaaa.status === 'fulfilled' ? aaaa.value : [])];
      }
    } catch {
      texts = [];
    }
    return texts.map((t) => parseIp(t)).filter((a): a is IpBytes => a !== null);
  }

  /** Addresses of the platform's own names (PUBLIC_URL's host...), resolved once; failures ignored. */
  private selfAddresses(): Promise<IpBytes[]> {
    this.selfResolved ??= Promise.all([...this.selfNames].filter((n) => !isLocalhostName(n)).map((n) => this.resolve(n)))
      .then((lists) => lists.flat().filter((a) => classify(a) !== 'loopback'))
      .catch(() => []);
    return this.selfResolved;
  }
}

function refusal(r: RefusalReason, subject: string): EgressRefused {
  if (r === 'self') return new EgressRefused(r, `${subject} this platform itself, which is not allowed`);
  if (r === 'url' || r === 'scheme' || r === 'credentials' || r === 'unresolvable' || r === 'redirect') return new EgressRefused(r, `${subject} not allowed`);
  return new EgressRefused(r, `${subject} ${describeClass(r)}, which is not allowed`);
}
