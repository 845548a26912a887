/**
 * SSRF guard: a webhook goes only to http(s) on a public address, unless WEBHOOK_ALLOW_PRIVATE=true.
 * The check runs on the address actually connected to (a custom DNS lookup), so a name that
 * resolves to a private address at send time is refused even if it was public when configured.
 */
import dns from 'node:dns';
import net from 'node:net';

const blocked = new net.BlockList();
for (const [a, p] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(a, p, 'ipv4');
for (const [a, p] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['::ffff:0:0', 96]] as const) {
  blocked.addSubnet(a, p, 'ipv6');
}

export function isPrivateAddress(ip: string): boolean {
  const family = net.isIPv6(ip) ? 'ipv6' : 'ipv4';
  return blocked.check(ip, family);
}

/** WEBHOOK_ALLOW_PRIVATE from the environment (true/false/1/0/yes/no; anything else is an error). */
export function allowPrivateFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.WEBHOOK_ALLOW_PRIVATE ?? '').trim().toLowerCase();
  if (['', 'false', '0', 'no'].includes(v)) return false;
  if (['true', '1', 'yes'].includes(v)) return true;
  throw new Error(`WEBHOOK_ALLOW_PRIVATE: must be true or false (got ${JSON.stringify(env.WEBHOOK_ALLOW_PRIVATE)})`);
}

export class TargetRefused extends Error {}

/** Validates the URL's form and, for literal IPs, the address. Throws TargetRefused. */
export function checkUrl(uri: string, allowPrivate: boolean): URL {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    throw new TargetRefused('webhook_uri is not a URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TargetRefused('webhook_uri must be http or https');
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && net.isIP(host) && isPrivateAddress(host)) throw new TargetRefused(`webhook target ${host} is a private address`);
  return u;
}

/** A `lookup` for http.request that refuses private answers. */
export function guardedLookup(allowPrivate: boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return (callback as (e: Error | null, a: string, f: number) => void)(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      const bad = allowPrivate ? undefined : list.find((a) => isPrivateAddress(a.address));
      if (bad) return (callback as (e: Error | null, a: string, f: number) => void)(new TargetRefused(`webhook target resolves to private address ${bad.address}`), '', 0);
      if ((options as dns.LookupOptions).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      const first = list[0]!;
      (callback as (e: Error | null, a: string, f: number) => void)(null, first.address, first.family);
    });
  };
}
