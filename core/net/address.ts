/**
 * IP addresses as the egress policy sees them (pure, no I/O): every literal spelling a URL or SIP
 * host can carry, normalised; each address put in one named class; CIDR ranges for the allowlist.
 *
 * An IPv6 address that carries an IPv4 address (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d,
 * SIIT ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16, Teredo 2001::/32) is classed by the
 * IPv4 address it carries when that one is not public: [::ffff:127.0.0.1] is loopback.
 */
import net from 'node:net';

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'cgnat' | 'multicast' | 'broadcast' | 'unspecified' | 'documentation' | 'reserved';

/** An address as 4 (IPv4) or 16 (IPv6) bytes. */
export interface IpBytes {
  family: 4 | 6;
  bytes: Uint8Array;
}

export interface Cidr {
  family: 4 | 6;
  bytes: Uint8Array;
  prefix: number;
  /** As written, for messages. */
  text: string;
}

/** Strips brackets and an IPv6 zone ("fe80::1%eth0"); returns '' when `s` is not an IP literal. */
export function ipLiteral(s: string): string {
  let v = s.trim();
  if (v.startsWith('[') && v.endsWith(']')) v = v.slice(1, -1);
  const zone = v.indexOf('%');
  if (zone > 0 && v.includes(':')) v = v.slice(0, zone);
  return net.isIP(v) ? v : '';
}

/** The bytes of an IP literal (brackets and zone allowed), or null when `s` is not one. */
export function parseIp(s: string): IpBytes | null {
  const v = ipLiteral(s);
  if (!v) return null;
  if (net.isIPv4(v)) return { family: 4, bytes: Uint8Array.from(v.split('.').map(Number)) };
  return { family: 6, bytes: parseIPv6(v) };
}

/** 16 bytes of a valid IPv6 text (net.isIPv6 already said yes), trailing dotted quad allowed. */
function parseIPv6(v: string): Uint8Array {
  let text = v.toLowerCase();
  const q = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (q) {
    const [a, b, c, d] = q.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, q.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const r = rest ? rest.split(':') : [];
  const fill = rest === undefined ? [] : new Array<string>(8 - h.length - r.length).fill('0');
  const out = new Uint8Array(16);
  [...h, ...fill, ...r].forEach((g, i) => {
    const n = parseInt(g, 16);
    out[2 * i] = n >> 8;
    out[2 * i + 1] = n & 0xff;
  });
  return out;
}

export function formatIp(a: IpBytes): string {
  if (a.family === 4) return Array.from(a.bytes).join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((a.bytes[i]! << 8) | a.bytes[i + 1]!).toString(16));
  // canonical compression through the URL parser (RFC 5952)
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}

/**
 * A host as a URL or SIP URI carries it, normalised by the WHATWG URL parser: 2130706433,
 * 0x7f000001, 0177.0.0.1 and 127.1 become 127.0.0.1; IPv6 comes back without brackets, in
 * canonical form; names come back lower-case (a trailing dot kept). Throws on a host no URL accepts.
 */
export function normalizeHost(host: string): string {
  const raw = host.trim();
  const bracket = !raw.startsWith('[') && net.isIPv6(raw.split('%')[0] ?? '') ? `[${raw.split('%')[0]}]` : raw;
  const h = new URL(`http://${bracket}/`).hostname;
  return h.startsWith('[') ? h.slice(1, -1) : h;
}

function v4(bytes: Uint8Array, offset = 0): IpBytes {
  return { family: 4, bytes: bytes.slice(offset, offset + 4) };
}

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

function allZero(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, SIIT, NAT64, 6to4, Teredo client), if any. */
export function embeddedIPv4(a: IpBytes): IpBytes | null {
  if (a.family === 4) return null;
  const b = a.bytes;
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated)
  if (allZero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(b, 12);
  if (allZero(b, 0, 12) && !allZero(b, 12, 16)) return v4(b, 12);
  // ::ffff:0:a.b.c.d (SIIT, RFC 2765)
  if (allZero(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0) return v4(b, 12);
  // 64:ff9b::/96 (NAT64, RFC 6052)
  if (startsWith(b, [0, 0x64, 0xff, 0x9b]) && allZero(b, 4, 12)) return v4(b, 12);
  // 2002:aabb:ccdd::/48 (6to4)
  if (b[0] === 0x20 && b[1] === 0x02) return v4(b, 2);
  // 2001:0000::/32 (Teredo): the client address is the last 32 bits, inverted
  if (startsWith(b, [0x20, 0x01, 0, 0])) return { family: 4, bytes: b.slice(12, 16).map((x) => x ^ 0xff) };
  return null;
}

export function parseCidr(text: string): Cidr {
  const t = text.trim();
  const slash = t.indexOf('/');
  const addr = slash >= 0 ? t.slice(0, slash) : t;
  const ip = parseIp(addr);
  if (!ip) throw new Error(`${JSON.stringify(text)} is not a CIDR range (like 10.1.0.0/16 or fd00::/8)`);
  const max = ip.family === 4 ? 32 : 128;
  const p = slash >= 0 ? t.slice(slash + 1) : String(max);
  if (!/^\d{1,3}$/.test(p) || Number(p) > max) throw new Error(`${JSON.stringify(text)} has a bad prefix length (0-${max})`);
  return { family: ip.family, bytes: ip.bytes, prefix: Number(p), text: t };
}

/** Comma-separated CIDRs (empty: none). Throws one message naming the first bad entry. */
export function parseCidrList(text: string | undefined): Cidr[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(parseCidr);
}

export function inCidr(a: IpBytes, c: Cidr): boolean {
  if (a.family !== c.family) return false;
  const full = c.prefix >> 3;
  for (let i = 0; i < full; i++) if (a.bytes[i] !== c.bytes[i]) return false;
  const bits = c.prefix & 7;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return (a.bytes[full]! & mask) === (c.bytes[full]! & mask);
}

const V4_RANGES: [string, AddressClass][] = [
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'cgnat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'reserved'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
];

const V6_RANGES: [string, AddressClass][] = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'private'],
  ['100::/64', 'reserved'],
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
  ['2001::/23', 'reserved'],
  ['fc00::/7', 'private'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private'],
  ['ff00::/8', 'multicast'],
];

const table = (rows: [string, AddressClass][]) => rows.map(([c, k]) => [parseCidr(c), k] as const);
const V4 = table(V4_RANGES);
const V6 = table(V6_RANGES);
const GLOBAL_UNICAST_V6 = parseCidr('2000::/3');

/** The class of an address; an IPv6 address carrying a non-public IPv4 address takes that address's class. */
export function classify(a: IpBytes): AddressClass {
  if (a.family === 4) return V4.find(([c]) => inCidr(a, c))?.[1] ?? 'public';
  if (allZero(a.bytes, 0, 15) && a.bytes[15]! <= 1) return a.bytes[15] ? 'loopback' : 'unspecified';
  const inner = embeddedIPv4(a);
  if (inner) {
    const k = classify(inner);
    if (k !== 'public') return k;
    // the compatible form (::a.b.c.d) is deprecated and routes nowhere
    if (allZero(a.bytes, 0, 12)) return 'reserved';
    // a mapped, NAT64 or 6to4 form of a public address reaches that address; Teredo falls to 2001::/23
    if (!startsWith(a.bytes, [0x20, 0x01, 0, 0])) return 'public';
  }
  const hit = V6.find(([c]) => inCidr(a, c));
  if (hit) return hit[1];
  return inCidr(a, GLOBAL_UNICAST_V6) ? 'public' : 'reserved';
}

/** classify() of a literal; throws when `s` is not an IP literal. */
export function classifyIp(s: string): AddressClass {
  const a = parseIp(s);
  if (!a) throw new Error(`${JSON.stringify(s)} is not an IP address`);
  return classify(a);
}

/** The addresses a CIDR in the allowlist also matches: an IPv4-mapped IPv6 address counts as its IPv4. */
export function allowlisted(a: IpBytes, allow: readonly Cidr[]): boolean {
  const b = a.bytes;
  const mapped = a.family === 6 && allZero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff ? v4(b, 12) : null;
  return allow.some((c) => inCidr(a, c) || (mapped !== null && inCidr(mapped, c)));
}

export function sameIp(a: IpBytes, b: IpBytes): boolean {
  return a.family === b.family && a.bytes.every((x, i) => x === b.bytes[i]);
}

/** Names that mean this host whatever DNS says (RFC 6761): localhost and *.localhost, with or without the final dot. */
export function isLocalhostName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost') || h === 'localhost.localdomain' || h === 'ip6-localhost' || h === 'ip6-loopback';
}

/**
 * A client address as the subject of a per-source counter (lockouts, throttles): an IPv6 address by
 * its /64 ("2001:db8:1:2::/64"; one host or site usually holds the whole /64), an IPv4 or
 * IPv4-mapped address as the IPv4 address. Anything else is returned as it is.
 */
export function sourceSubject(address: string): string {
  const a = parseIp(address);
  if (!a) return address;
  if (a.family === 4) return formatIp(a);
  const b = a.bytes;
  if (allZero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return formatIp(v4(b, 12));
  const head = new Uint8Array(16);
  head.set(b.slice(0, 8));
  return `${formatIp({ family: 6, bytes: head })}/64`;
}

/** Whether `host` is an unspecified address (0.0.0.0, ::): a listener's wildcard, never an address to dial. */
export function isWildcardIp(host: string): boolean {
  const a = parseIp(host);
  return a !== null && allZero(a.bytes, 0, a.bytes.length);
}

/** `host:port` or `[v6]:port` → its parts, or null (a listen setting's shape: core/config, scripts/processes). */
export function parseHostPort(v: string): { host: string; port: number } | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(v);
  const p = m ? Number(m[3]) : NaN;
  return m && p <= 65535 ? { host: (m[1] ?? m[2])!, port: p } : null;
}
