/**
 * The egress policy (core/net): the classifier over every range (pure functions: no packet to any
 * non-loopback address), the policy against a loopback DNS server, rebinding, redirects, size and
 * time bounds, the allowlist. Every connection goes to 127.0.0.0/8 or ::1.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { WebSocket, WebSocketServer } from 'ws';
import { classifyIp, normalizeHost, parseCidr, parseCidrList, type AddressClass } from '../../core/net/address';
import { EgressPolicy, egressSettingsFromEnv, EgressRefused, EgressFailed } from '../../core/net';
import { loadConfig, ConfigError } from '../../core/config';
import { startInternalTargets, SPELLINGS, PURE_SPELLINGS, DNS_NAMES, type InternalTargets } from './spellings';

const policyOf = (env: Record<string, string>) => new EgressPolicy(egressSettingsFromEnv(env));

describe('egress policy', () => {
  describe('classifier (pure)', () => {
    const cases: [string, AddressClass][] = [
      ['8.8.8.8', 'public'],
      ['1.1.1.1', 'public'],
      ['2606:4700::1111', 'public'],
      ['::ffff:8.8.8.8', 'public'],
      ['64:ff9b::808:808', 'public'],
      ['2002:808:808::1', 'public'],
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['::1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['fd00::1', 'private'],
      ['fc00::1', 'private'],
      ['fec0::1', 'private'],
      ['64:ff9b:1::a00:1', 'private'],
      ['172.32.0.1', 'public'],
      ['172.15.255.255', 'public'],
      ['169.254.169.254', 'link-local'],
      ['fe80::1', 'link-local'],
      ['fe80::1%eth0', 'link-local'],
      ['100.64.0.1', 'cgnat'],
      ['100.127.255.255', 'cgnat'],
      ['100.128.0.1', 'public'],
      ['224.0.0.1', 'multicast'],
      ['239.255.255.250', 'multicast'],
      ['ff02::1', 'multicast'],
      ['255.255.255.255', 'broadcast'],
      ['0.0.0.0', 'unspecified'],
      ['0.1.2.3', 'unspecified'],
      ['::', 'unspecified'],
      ['192.0.2.1', 'documentation'],
      ['198.51.100.1', 'documentation'],
      ['203.0.113.9', 'documentation'],
      ['2001:db8::1', 'documentation'],
      ['3fff::1', 'documentation'],
      ['240.0.0.1', 'reserved'],
      ['198.18.0.1', 'reserved'],
      ['192.0.0.8', 'reserved'],
      ['192.88.99.1', 'reserved'],
      ['100::1', 'reserved'],
      ['2001:10::1', 'reserved'],
      ['4000::1', 'reserved'],
      ['::8.8.8.8', 'reserved'],
      // IPv4 carried in IPv6 takes its class
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
      ['::127.0.0.1', 'loopback'],
      ['::ffff:0:127.0.0.1', 'loopback'],
      ['64:ff9b::7f00:1', 'loopback'],
      ['64:ff9b::a9fe:a9fe', 'link-local'],
      ['::ffff:10.0.0.1', 'private'],
      ['::ffff:169.254.169.254', 'link-local'],
      ['2002:7f00:1::1', 'loopback'],
      ['2002:a00:1::', 'private'],
      ['2002:a9fe:a9fe::', 'link-local'],
      ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
      ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'private'],
    ];
    for (const [ip, k] of cases) it(`${ip} is ${k}`, () => expect(classifyIp(ip)).to.equal(k));

    it('refuses every pure-only spelling of an internal address', () => {
      for (const s of PURE_SPELLINGS) expect(classifyIp(s), s).to.not.equal('public');
    });

    it('normalises every URL spelling of loopback the WHATWG way', () => {
      for (const h of ['2130706433', '0x7f000001', '0177.0.0.1', '127.1', '127.0.1', '0x7f.0.0.1', '017700000001', '127.000.000.001']) {
        expect(normalizeHost(h), h).to.equal('127.0.0.1');
      }
      expect(normalizeHost('[::ffff:127.0.0.1]')).to.equal('::ffff:7f00:1');
      expect(normalizeHost('::1')).to.equal('::1');
      expect(normalizeHost('0')).to.equal('0.0.0.0');
    });

    it('parses CIDRs and refuses bad ones with a clear message', () => {
      expect(parseCidrList('10.1.0.0/16, fd00::/8,127.0.0.2').map((c) => c.prefix)).to.deep.equal([16, 8, 32]);
      expect(() => parseCidr('10.1.0.0/33')).to.throw(/bad prefix length/);
      expect(() => parseCidr('banana/8')).to.throw(/not a CIDR/);
    });

    it('a bad EGRESS_ALLOW_CIDRS or EGRESS_DNS_SERVERS stops the start with one clear line each', () => {
      try {
        loadConfig({ EGRESS_ALLOW_CIDRS: '10.1.0.0/16,10.2.0.0/99', EGRESS_DNS_SERVERS: 'dns.example', JWT_SECRET: 'x'.repeat(40) }, { persistSecret: false });
        expect.fail('accepted');
      } catch (e) {
        expect(e).to.be.instanceOf(ConfigError);
        const problems = (e as ConfigError).problems.join('\n');
        expect(problems).to.match(/EGRESS_ALLOW_CIDRS: "10\.2\.0\.0\/99" has a bad prefix length/);
        expect(problems).to.match(/EGRESS_DNS_SERVERS: "dns\.example" is not an IP address/);
      }
    });

    it('WEBHOOK_ALLOW_PRIVATE=true is refused at start, naming its replacement', () => {
      expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'true', JWT_SECRET: 'x'.repeat(40) }, { persistSecret: false })).to.throw(/WEBHOOK_ALLOW_PRIVATE: removed.*EGRESS_ALLOW_CIDRS/);
      expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'false', JWT_SECRET: 'x'.repeat(40) }, { persistSecret: false }).egress.allowCidrs).to.deep.equal([]);
    });
  });

  describe('policy (no DNS)', () => {
    const p = policyOf({ EGRESS_ALLOW_CIDRS: '10.1.0.0/16,fd00:1::/64', PUBLIC_URL: 'https://voice.example.com', SIP_ADVERTISED_HOST: '203.0.113.5' });

    it('allowlist opens exactly its ranges (mapped IPv4 counts as IPv4)', () => {
      expect(p.verdict('10.1.2.3')).to.equal(null);
      expect(p.verdict('::ffff:10.1.2.3')).to.equal(null);
      expect(p.verdict('10.2.0.1')).to.equal('private');
      expect(p.verdict('fd00:1::5')).to.equal(null);
      expect(p.verdict('fd00:2::5')).to.equal('private');
      expect(p.verdict('8.8.8.8')).to.equal(null);
    });

    it('the platform itself is refused (SIP_ADVERTISED_HOST, PUBLIC_URL host)', () => {
      expect(p.verdict('203.0.113.5')).to.equal('self');
      expect(() => p.assertUrlSyntax('https://VOICE.example.com./x')).to.throw(EgressRefused, /this platform itself/);
    });

    it('assertUrlSyntax: scheme, credentials, literal addresses, names left to run time', () => {
      const refused = (u: string) => {
        try {
          p.assertUrlSyntax(u, 'source_urls[0]');
        } catch (e) {
          expect(e).to.be.instanceOf(EgressRefused);
          return (e as EgressRefused).message;
        }
        return expect.fail(`${u} accepted`);
      };
      expect(refused('ftp://example.com/x')).to.equal('source_urls[0] must use http or https');
      expect(refused('file:///etc/passwd')).to.equal('source_urls[0] must use http or https');
      expect(refused('gopher://127.0.0.1:6379/_INFO')).to.match(/http or https/);
      expect(refused('http://user:pw@example.com/')).to.match(/must not carry a user name or password/);
      expect(refused('not a url')).to.match(/is not a valid URL/);
      expect(refused('http://169.254.169.254/latest/meta-data/')).to.equal("source_urls[0]'s host is a link-local address, which is not allowed");
      expect(refused('http://[::ffff:a9fe:a9fe]/')).to.match(/link-local/);
      expect(refused('http://[64:ff9b::7f00:1]/')).to.match(/loopback/);
      expect(refused('http://100.100.100.200/')).to.match(/cgnat/);
      expect(refused('http://[fd00::1]/')).to.match(/private/);
      for (const s of SPELLINGS.filter((x) => x.kind === 'literal')) expect(refused(`http://${s.host}:80/`), s.label).to.match(/not allowed/);
      expect(p.assertUrlSyntax('https://example.com/doc').hostname).to.equal('example.com');
      expect(p.assertUrlSyntax('http://10.1.0.9:11434/v1').hostname).to.equal('10.1.0.9');
    });
  });

  describe('policy with a loopback DNS and loopback servers', () => {
    let t: InternalTargets;
    let p: EgressPolicy;
    before(async () => {
      t = await startInternalTargets();
      p = policyOf(t.env);
    });
    after(() => t.close());
    afterEach(() => expect(t.internalHits(), 'the forbidden server was reached').to.equal(0));

    it('every shared spelling is refused, or (rebinding) only the allowed server answers', async () => {
      for (const s of SPELLINGS) {
        t.resetRebind();
        const r = await p.fetch(s.url(t), { maxRedirects: 3, timeoutMs: 3000 }).then(
          (x) => x,
          (e: unknown) => e,
        );
        if (s.refused) {
          expect(r, s.label).to.be.instanceOf(EgressRefused);
          expect((r as Error).message, s.label).to.not.include(t.secret);
        } else {
          expect((r as { body: Buffer }).body.toString(), s.label).to.include('allowed server');
        }
      }
    });

    it('a name is resolved once and the socket goes to the checked address (no rebinding)', async () => {
      t.resetRebind();
      const r = await p.fetch(`http://${DNS_NAMES.rebind}:${t.port}/x`);
      expect(r.status).to.equal(200);
      expect(r.body.toString()).to.include('allowed server');
      expect(t.dns.queries(DNS_NAMES.rebind)).to.equal(1);
      // the next resolution answers 127.0.0.1: refused, never connected
      const again = await p.fetch(`http://${DNS_NAMES.rebind}:${t.port}/x`).catch((e: unknown) => e);
      expect(again).to.be.instanceOf(EgressRefused);
      expect((again as EgressRefused).message).to.equal('the destination host name resolves to an address that is not allowed');
    });

    it('the pinned lookup keeps http.request and ws on the checked address even when DNS changes', async () => {
      t.resetRebind();
      const c = await p.resolveAndCheck(DNS_NAMES.rebind);
      expect(c.address).to.equal('127.0.0.2');
      // DNS now answers 127.0.0.1; the pinned lookup does not ask again
      await p.resolveAndCheck(DNS_NAMES.rebind).catch(() => undefined);
      const body = await new Promise<string>((resolve, reject) => {
        http
          .get(`http://${DNS_NAMES.rebind}:${t.port}/x`, { lookup: c.lookup }, (res) => {
            let b = '';
            res.on('data', (d: Buffer) => (b += d.toString()));
            res.on('end', () => resolve(b));
          })
          .on('error', reject);
      });
      expect(body).to.include('allowed server');
      const wss = new WebSocketServer({ host: '127.0.0.2', port: 0 });
      await new Promise((r) => wss.once('listening', r));
      try {
        wss.on('connection', (sock) => sock.send('hello from 127.0.0.2'));
        const ws = new WebSocket(`ws://${DNS_NAMES.rebind}:${(wss.address() as AddressInfo).port}/`, { lookup: c.lookup });
        const msg = await new Promise<string>((resolve, reject) => {
          ws.once('message', (d: Buffer) => resolve(d.toString()));
          ws.once('error', reject);
        });
        ws.close();
        expect(msg).to.equal('hello from 127.0.0.2');
      } finally {
        wss.close();
      }
    });

    it('every address of a name is checked, not only the first', async () => {
      const e = await p.resolveAndCheck(DNS_NAMES.mixed).catch((x: unknown) => x);
      expect(e).to.be.instanceOf(EgressRefused);
      expect((e as EgressRefused).reason).to.equal('loopback');
      const ok = await p.resolveAndCheck(DNS_NAMES.allowed);
      expect(ok).to.include({ address: '127.0.0.2', family: 4 });
    });

    it('an unknown name is refused as unresolvable', async () => {
      const e = await p.resolveAndCheck('nothing-here.egress.test').catch((x: unknown) => x);
      expect(e).to.be.instanceOf(EgressRefused);
      expect((e as EgressRefused).reason).to.equal('unresolvable');
    });

    it('redirects: not followed by default, followed and re-checked when asked, bounded in count', async () => {
      const to = encodeURIComponent(`${t.allowedUrl}/final`);
      const plain = await p.fetch(`${t.allowedUrl}/redirect?to=${to}`);
      expect(plain.status).to.equal(302);
      const followed = await p.fetch(`${t.allowedUrl}/redirect?to=${to}`, { maxRedirects: 2 });
      expect(followed.status).to.equal(200);
      expect(followed.url).to.equal(`${t.allowedUrl}/final`);
      const loop = `${t.allowedUrl}/redirect?to=${encodeURIComponent(`${t.allowedUrl}/redirect?to=${to}`)}`;
      const e = await p.fetch(loop, { maxRedirects: 1 }).catch((x: unknown) => x);
      expect(e).to.be.instanceOf(EgressFailed);
      expect((e as EgressFailed).reason).to.equal('too-many-redirects');
      const bad = await p.fetch(`${t.allowedUrl}/redirect?to=${encodeURIComponent('file:///etc/passwd')}`, { maxRedirects: 2 }).catch((x: unknown) => x);
      expect(bad).to.be.instanceOf(EgressRefused);
      expect((bad as EgressRefused).reason).to.equal('redirect');
    });
  });

  describe('bounds', () => {
    let server: http.Server;
    let base: string;
    const p = policyOf({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
    before(async () => {
      server = http.createServer((req, res) => {
        if (req.url === '/big') res.end(Buffer.alloc(64 * 1024, 'a'));
        else if (req.url === '/chunked-big') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const timer = setInterval(() => res.write(Buffer.alloc(8192, 'b')), 1);
          res.on('close', () => clearInterval(timer));
        } else if (req.url === '/slow') setTimeout(() => res.end('late'), 2000).unref();
        else res.end('ok');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => {
      server.closeAllConnections();
      server.close();
    });

    it('a body over maxBytes fails as too-large (declared or streamed)', async () => {
      for (const path of ['/big', '/chunked-big']) {
        const e = await p.fetch(base + path, { maxBytes: 16 * 1024 }).catch((x: unknown) => x);
        expect(e, path).to.be.instanceOf(EgressFailed);
        expect((e as EgressFailed).reason, path).to.equal('too-large');
      }
    });

    it('a silent server, a closed port and a refused name read the same generic way', async () => {
      const slow = await p.fetch(base + '/slow', { timeoutMs: 200 }).catch((x: unknown) => x);
      const closed = await p.fetch('http://127.0.0.1:1/', { timeoutMs: 2000 }).catch((x: unknown) => x);
      for (const e of [slow, closed]) {
        expect(e).to.be.instanceOf(EgressFailed);
        expect((e as EgressFailed).message).to.equal('the server could not be reached or did not answer in time');
      }
    });

    it('the loopback allowlist is what opens loopback: without it the same URL is refused', async () => {
      expect((await p.fetch(base + '/')).body.toString()).to.equal('ok');
      const e = await policyOf({})
        .fetch(base + '/')
        .catch((x: unknown) => x);
      expect(e).to.be.instanceOf(EgressRefused);
      expect((e as EgressRefused).message).to.equal("the URL's host is a loopback address, which is not allowed");
    });
  });
});
