/**
 * The shared list of ways to spell "this machine" that every egress path is tested against
 * (RAG sources, AI engine URLs, webhooks, flow HTTP, media URLs, SIP destinations). Every spelling
 * lands on loopback, so a path that lets one through sends its packet to this machine only.
 *
 *   const t = await startInternalTargets();      // forbidden server on 127.0.0.1:P and [::1]:P,
 *                                                // allowed server on 127.0.0.2:P, a loopback DNS
 *   env = { ...env, ...t.env };                  // EGRESS_ALLOW_CIDRS=127.0.0.2/32, EGRESS_DNS_SERVERS
 *   for (const s of SPELLINGS) { ... s.url(t) ... ; expect(t.internalHits()).to.equal(0) }
 *   await t.close();
 *
 * `refused`: the platform must refuse it (at validation or at run time). The rebinding name is
 * the exception: it may be fetched (its first answer, the allowed 127.0.0.2, is pinned) but the
 * forbidden server must never see a request.
 *
 * Pure-function-only spellings (NAT64, 6to4, Teredo, compatible, SIIT: the kernel would not route
 * them to loopback, so no test may send to them) are in PURE_SPELLINGS, for the classifier tests.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDnsServer, type DnsServer } from '../support/dns-server';

export interface InternalTargets {
  /** Port of every server (forbidden on 127.0.0.1 and ::1, allowed on 127.0.0.2). */
  port: number;
  dns: DnsServer;
  /** EGRESS_ALLOW_CIDRS and EGRESS_DNS_SERVERS for the platform under test. */
  env: { EGRESS_ALLOW_CIDRS: string; EGRESS_DNS_SERVERS: string };
  /** Requests the forbidden server received (must stay 0). */
  internalHits(): number;
  /** Requests the allowed server received. */
  allowedHits(): number;
  /** The allowed server's URL (http://127.0.0.2:P). */
  allowedUrl: string;
  /** A body only the forbidden server returns: if it shows up anywhere, it leaked. */
  secret: string;
  /** Puts the rebinding name back to its first answer (each test that uses it calls this first). */
  resetRebind(): void;
  close(): Promise<void>;
}

export interface Spelling {
  label: string;
  /** The host as a URL authority carries it (brackets on IPv6), or null for redirect cases. */
  host: string | null;
  url(t: InternalTargets): string;
  /** The platform must refuse it; false: it may succeed, but only against the allowed server. */
  refused: boolean;
  kind: 'literal' | 'name' | 'redirect' | 'rebind';
}

export const DNS_NAMES = {
  loop4: 'loop4.egress.test',
  loop6: 'loop6.egress.test',
  mapped: 'mapped.egress.test',
  zero: 'zero.egress.test',
  mixed: 'mixed.egress.test',
  allowed: 'allowed.egress.test',
  rebind: 'rebind.egress.test',
} as const;

const literal = (label: string, host: string): Spelling => ({
  label,
  host,
  kind: 'literal',
  refused: true,
  url: (t) => `http://${host}:${t.port}/internal`,
});
const name = (label: string, host: string): Spelling => ({
  label,
  host,
  kind: 'name',
  refused: true,
  url: (t) => `http://${host}:${t.port}/internal`,
});

export const SPELLINGS: Spelling[] = [
  literal('dotted quad', '127.0.0.1'),
  literal('short form 127.1', '127.1'),
  literal('short form 127.0.1', '127.0.1'),
  literal('decimal', '2130706433'),
  literal('hex', '0x7f000001'),
  literal('hex first octet', '0x7f.0.0.1'),
  literal('octal first octet', '0177.0.0.1'),
  literal('octal whole', '017700000001'),
  literal('zero-padded octets', '127.000.000.001'),
  literal('another 127/8 address', '127.255.255.254'),
  literal('unspecified 0.0.0.0', '0.0.0.0'),
  literal('unspecified 0', '0'),
  literal('localhost', 'localhost'),
  literal('localhost with final dot', 'localhost.'),
  literal('LOCALHOST upper case', 'LOCALHOST'),
  literal('IPv6 loopback', '[::1]'),
  literal('IPv6 loopback long form', '[0:0:0:0:0:0:0:1]'),
  literal('IPv4-mapped dotted', '[::ffff:127.0.0.1]'),
  literal('IPv4-mapped hex', '[::ffff:7f00:1]'),
  literal('IPv4-mapped long form', '[0:0:0:0:0:ffff:7f00:1]'),
  name('DNS name with an A record 127.0.0.1', DNS_NAMES.loop4),
  name('DNS name with a final dot', `${DNS_NAMES.loop4}.`),
  name('DNS name with an AAAA record ::1', DNS_NAMES.loop6),
  name('DNS name with an AAAA record ::ffff:7f00:1', DNS_NAMES.mapped),
  name('DNS name with an A record 0.0.0.0', DNS_NAMES.zero),
  name('DNS name with one allowed and one loopback address', DNS_NAMES.mixed),
  {
    label: 'redirect from an allowed host to 127.0.0.1',
    host: null,
    kind: 'redirect',
    refused: true,
    url: (t) => `${t.allowedUrl}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${t.port}/internal`)}`,
  },
  {
    label: 'redirect from an allowed host to a name resolving to 127.0.0.1',
    host: null,
    kind: 'redirect',
    refused: true,
    url: (t) => `${t.allowedUrl}/redirect?to=${encodeURIComponent(`http://${DNS_NAMES.loop4}:${t.port}/internal`)}`,
  },
  {
    label: 'DNS rebinding (allowed address first, 127.0.0.1 on the next lookup)',
    host: DNS_NAMES.rebind,
    kind: 'rebind',
    refused: false,
    url: (t) => `http://${DNS_NAMES.rebind}:${t.port}/internal`,
  },
];

/** Spellings the classifier must refuse, never sent anywhere (the kernel would not keep them on loopback). */
export const PURE_SPELLINGS: string[] = [
  '::127.0.0.1',
  '::7f00:1',
  '::ffff:0:127.0.0.1',
  '64:ff9b::7f00:1',
  '64:ff9b::127.0.0.1',
  '64:ff9b:1::a00:1',
  '2002:7f00:1::1',
  '2002:a00:1::',
  '2001:0:4136:e378:8000:63bf:80ff:fffe',
];

function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The forbidden servers, the allowed one and the loopback DNS; see the file comment. */
export async function startInternalTargets(): Promise<InternalTargets> {
  const secret = `internal-secret-${process.pid}-${Date.now()}`;
  let internal = 0;
  let allowed = 0;
  const forbidden = (_req: http.IncomingMessage, res: http.ServerResponse) => {
    internal++;
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`${secret}\n`);
  };
  const v4 = http.createServer(forbidden);
  const v6 = http.createServer(forbidden);
  const ok = http.createServer((req, res) => {
    allowed++;
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/redirect') {
      res.writeHead(302, { location: u.searchParams.get('to') ?? '/' }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('allowed server says hello\n');
  });
  let port = 0;
  for (let tries = 0; ; tries++) {
    await listen(v4, 0, '127.0.0.1');
    port = (v4.address() as AddressInfo).port;
    try {
      await listen(v6, port, '::1');
      await listen(ok, port, '127.0.0.2');
      break;
    } catch (e) {
      for (const s of [v4, v6, ok]) if (s.listening) await new Promise((r) => s.close(r));
      if (tries > 5) throw e;
    }
  }
  const dns = await startDnsServer({
    [DNS_NAMES.loop4]: { a: ['127.0.0.1'] },
    [DNS_NAMES.loop6]: { aaaa: ['::1'] },
    [DNS_NAMES.mapped]: { aaaa: ['::ffff:7f00:1'] },
    [DNS_NAMES.zero]: { a: ['0.0.0.0'] },
    [DNS_NAMES.mixed]: { a: ['127.0.0.2'], aaaa: ['::1'] },
    [DNS_NAMES.allowed]: { a: ['127.0.0.2'] },
  });
  const resetRebind = () => dns.set(DNS_NAMES.rebind, [{ a: ['127.0.0.2'] }, { a: ['127.0.0.1'] }]);
  resetRebind();
  return {
    port,
    dns,
    env: { EGRESS_ALLOW_CIDRS: '127.0.0.2/32', EGRESS_DNS_SERVERS: dns.server },
    internalHits: () => internal,
    allowedHits: () => allowed,
    allowedUrl: `http://127.0.0.2:${port}`,
    secret,
    resetRebind,
    async close() {
      for (const s of [v4, v6, ok]) {
        s.closeAllConnections();
        await new Promise((r) => s.close(r));
      }
      await dns.close();
    },
  };
}
