/**
 * Issue 32 item 15: Origin checks.
 *  - sip-server's SIP over WebSocket refuses a handshake whose Origin is not allowed (PUBLIC_URL's origin
 *    plus SIP_WS_ALLOWED_ORIGINS) with HTTP 403 before the WebSocket opens; no Origin (not a browser) is
 *    allowed. Real SipStack on loopback, real `ws` clients sending the header a browser sends.
 *  - control-api refuses POST/PUT/PATCH/DELETE authenticated by the session cookie from a foreign Origin
 *    (403 envelope, nothing changed); bearer, query token and accesskey requests are unaffected. Real
 *    control-api over HTTP on loopback, real Postgres and Redis.
 */
import http from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import WebSocket from 'ws';
import { loadSipConfig, SipConfigError } from '../../sip-config';
import type { SipStack } from '../../sip-server/stack';
import { startStack } from '../sip-server/stack/support';
import { WsSipPhone } from '../support/ws-sip';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { freePort } from '../../testkit/ports';
import { upgradeStatus } from '../support/ws-upgrade';
import { attachWebSocket } from '../../control-api/ws';
import { newId } from '../../core/ids';

const PLATFORM = 'https://console.example.test';

/** The handshake's HTTP status (101 when the WebSocket opened) and the refusal's body. */
function handshake(url: string, origin?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ['sip'], origin === undefined ? {} : { origin });
    ws.once('open', () => {
      ws.close();
      resolve({ status: 101, body: '' });
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('error', reject);
  });
}

describe('security: Origin checks (issue 32 item 15)', function () {
  this.timeout(30_000);

  describe('SIP over WebSocket', () => {
    let stack: SipStack;
    let url: string;
    before(async () => {
      const env = { PUBLIC_URL: `${PLATFORM}/`, SIP_WS_ALLOWED_ORIGINS: 'http://localhost:3000, https://partner.example.test' };
      stack = await startStack({ listen: { wsPort: 0 }, security: { wsAllowedOrigins: loadSipConfig(env).security.wsAllowedOrigins } });
      stack.on('request', (req, srv) => srv.respond(req.makeResponse(200)));
      url = `ws://127.0.0.1:${stack.listeningPoint('ws')!.port}`;
    });
    after(async () => stack?.stop());

    it('a page of another site gets 403 before the WebSocket opens; its connection never reaches SIP', async () => {
      for (const origin of ['https://evil.example.test', 'http://console.example.test', 'https://console.example.test:8443', 'null', 'https://console.example.test.evil.test']) {
        const r = await handshake(url, origin);
        expect(r.status, origin).to.equal(403);
        expect(r.body, origin).to.match(/SIP_WS_ALLOWED_ORIGINS/);
      }
    });

    it("the platform's own pages, the listed origins and clients without Origin (phones) connect and talk SIP", async () => {
      for (const origin of [PLATFORM, 'HTTPS://Console.Example.Test:443', 'http://localhost:3000', 'https://partner.example.test', undefined]) {
        expect((await handshake(url, origin)).status, String(origin)).to.equal(101);
      }
      const phone = await WsSipPhone.connect(url);
      try {
        const res = await phone.request(['OPTIONS sip:127.0.0.1 SIP/2.0', 'From: <sip:t@x.invalid>;tag=1', 'To: <sip:127.0.0.1>', 'Call-ID: origin-ok', 'CSeq: 1 OPTIONS']);
        expect(res.status).to.equal(200);
      } finally {
        await phone.close();
      }
    });

    it('settings: PUBLIC_URL is always allowed, SIP_WS_ALLOWED_ORIGINS adds (or * opens); bad values stop the start', () => {
      expect(loadSipConfig({}).security.wsAllowedOrigins).to.deep.equal(['http://127.0.0.1:8080']);
      expect(loadSipConfig({ PUBLIC_URL: 'https://pbx.example.test/base/' }).security.wsAllowedOrigins).to.deep.equal(['https://pbx.example.test']);
      expect(loadSipConfig({ SIP_WS_ALLOWED_ORIGINS: '*' }).security.wsAllowedOrigins).to.deep.equal(['http://127.0.0.1:8080', '*']);
      let err: unknown;
      try {
        loadSipConfig({ PUBLIC_URL: 'ftp://x', SIP_WS_ALLOWED_ORIGINS: 'https://ok.test,https://a.test/path,javascript:alert(1)' });
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(SipConfigError);
      const problems = (err as SipConfigError).problems;
      expect(problems).to.include('PUBLIC_URL: must be an http(s) URL, got "ftp://x"');
      expect(problems).to.include('SIP_WS_ALLOWED_ORIGINS: "https://a.test/path" is not an origin (scheme://host[:port]) nor *');
      expect(problems).to.include('SIP_WS_ALLOWED_ORIGINS: "javascript:alert(1)" is not an origin (scheme://host[:port]) nor *');
    });
  });

  describe('cookie-authenticated API requests', () => {
    let t: TestApp;
    let f: Fixture;
    let server: http.Server;
    let base: string;
    let cookie: string;
    before(async () => {
      t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', PUBLIC_URL: PLATFORM } });
      server = http.createServer(t.app);
      const port = await freePort();
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
      base = `http://127.0.0.1:${port}`;
    });
    after(async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await t.close();
    });
    beforeEach(async () => {
      f = await createFixture(t.ctx);
      const login = await request(base).post('/auth/login').send({ username: f.admin.username, password: f.password });
      expect(login.status).to.equal(200);
      cookie = `token=${login.body.token as string}`;
    });

    const rename = (name: string) => request(base).put(`/v1.0/agents/${f.admin.id}`).send({ name });
    const nameNow = async () => (await t.ctx.repos.agents.get(f.admin.id))!.name;
    const expectRefused = (res: request.Response) => {
      expect(res.status, JSON.stringify(res.body)).to.equal(403);
      expect(res.body.error.reason).to.equal('PERMISSION_DENIED');
      expect(res.body.error.message).to.match(/Origin/);
    };

    it('a foreign Origin with the session cookie: 403 in the envelope, nothing changed (PUT, POST, DELETE)', async () => {
      for (const origin of ['https://evil.example.test', 'null', 'http://127.0.0.1:1', 'not a url']) {
        expectRefused(await rename('by evil').set('Cookie', cookie).set('Origin', origin));
      }
      expect(await nameNow()).to.equal('admin');
      const keysBefore = (await t.ctx.repos.accesskeys.listByCustomer(f.customer.id, { pageSize: 100, pageToken: '' })).result.length;
      expectRefused(await request(base).post('/v1.0/accesskeys').set('Cookie', cookie).set('Origin', 'https://evil.example.test').send({ name: 'x' }));
      expect((await t.ctx.repos.accesskeys.listByCustomer(f.customer.id, { pageSize: 100, pageToken: '' })).result.length).to.equal(keysBefore);
      expectRefused(await request(base).delete(`/v1.0/accesskeys/${f.accesskeyRow.id}`).set('Cookie', cookie).set('Origin', 'https://evil.example.test'));
      expect(await t.ctx.repos.accesskeys.get(f.accesskeyRow.id)).to.not.equal(null);
      // signing out from another site is refused too: the session stays
      expectRefused(await request(base).post('/console/sign-out').set('Cookie', cookie).set('Origin', 'https://evil.example.test'));
      expectRefused(await request(base).post('/auth/logout').set('Cookie', cookie).set('Origin', 'https://evil.example.test'));
      expect((await request(base).get('/v1.0/customer').set('Cookie', cookie)).status).to.equal(200);
    });

    it("the platform's origin, the request's own origin and no Origin at all pass", async () => {
      expect((await rename('from the console').set('Cookie', cookie).set('Origin', PLATFORM)).status).to.equal(200);
      expect((await rename('same host').set('Cookie', cookie).set('Origin', base)).status).to.equal(200);
      expect((await rename('curl').set('Cookie', cookie)).status).to.equal(200);
      expect(await nameNow()).to.equal('curl');
    });

    it('bearer, query token and accesskey requests are not affected; reads are not affected', async () => {
      const evil = 'https://evil.example.test';
      expect((await rename('bearer').set('Authorization', `Bearer ${f.token}`).set('Cookie', cookie).set('Origin', evil)).status).to.equal(200);
      expect((await rename('query').query({ token: f.token }).set('Origin', evil)).status).to.equal(200);
      expect((await rename('key').query({ accesskey: f.accesskey }).set('Origin', evil)).status).to.equal(200);
      expect(await nameNow()).to.equal('key');
      expect((await request(base).get('/v1.0/customer').set('Cookie', cookie).set('Origin', evil)).status).to.equal(200);
    });

    it('control-api WebSockets: a foreign Origin with the session cookie is refused at the upgrade (403)', async () => {
      const ws = await attachWebSocket(server, t.ctx, { stream: `test-origin-${newId()}`, recheckMs: 60_000 });
      try {
        const url = `${base.replace(/^http/, 'ws')}/v1.0/ws`;
        const denied = { status: 403, reason: 'PERMISSION_DENIED' };
        for (const origin of ['https://evil.example.test', 'null', 'https://console.example.test.', 'https://console.example.test:8443']) {
          expect(await upgradeStatus(url, { Cookie: cookie, Origin: origin }), origin).to.deep.equal(denied);
        }
        // the platform's pages (any case, default port), the request's own origin, no Origin (not a browser)
        for (const origin of [PLATFORM, 'HTTPS://Console.Example.Test:443', base]) {
          expect(await upgradeStatus(url, { Cookie: cookie, Origin: origin }), origin).to.deep.equal({ status: 101 });
        }
        expect(await upgradeStatus(url, { Cookie: cookie })).to.deep.equal({ status: 101 });
        // a token in the URL is no ambient credential: another site's page had to know it
        expect(await upgradeStatus(`${url}?token=${f.token}`, { Origin: 'https://evil.example.test' })).to.deep.equal({ status: 101 });
      } finally {
        await ws.close();
      }
    });
  });
});
