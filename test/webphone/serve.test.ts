// control-api serves the browser phone at /phone/ from dist/web/phone (built here by buildWebApp)
// with its security headers and config.json; a missing build answers 503 with the command to run.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { buildWebApp } from '../../scripts/build-web';
import { phoneCsp, webphoneRouter } from '../../control-api/webphone/serve';
import { buildTestApp, type TestApp } from '../../testkit/api';

describe('webphone: served at /phone/', function () {
  this.timeout(60_000);
  let t: TestApp;

  before(async () => {
    await buildWebApp('phone');
    t = await buildTestApp({ env: { SIP_WSS_PUBLIC_URL: 'wss://sip.example.test:7443/ws', SIP_DOMAIN: 'example.test' } });
  });
  after(async () => t?.close());

  it('redirects /phone to /phone/ and serves index.html with a CSP allowing only self and the SIP WebSocket origin', async () => {
    const r = await request(t.app).get('/phone');
    expect(r.status).to.equal(301);
    expect(r.headers.location).to.equal('/phone/');
    const page = await request(t.app).get('/phone/');
    expect(page.status).to.equal(200);
    expect(page.headers['content-type']).to.match(/text\/html/);
    expect(page.text).to.contain('<script type="module" src="main.js">');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).to.contain("default-src 'none'");
    expect(csp).to.contain("script-src 'self'");
    expect(csp).to.contain("connect-src 'self' wss://sip.example.test:7443;");
    expect(csp).to.contain("frame-ancestors 'self'");
    expect(csp).to.not.match(/unsafe-inline|unsafe-eval|\*/);
    expect(page.headers['x-content-type-options']).to.equal('nosniff');
    expect(page.headers['x-frame-options']).to.equal('SAMEORIGIN');
    expect(page.headers['permissions-policy']).to.contain('microphone=(self)');
    expect(page.headers['cache-control']).to.equal('no-cache');
  });

  it('serves the bundle and the stylesheet; no CDN URL anywhere in the page or the bundle', async () => {
    const js = await request(t.app).get('/phone/main.js');
    expect(js.status).to.equal(200);
    expect(js.headers['content-type']).to.match(/javascript/);
    expect(js.text).to.contain('openvoice-webphone');
    const css = await request(t.app).get('/phone/phone.css');
    expect(css.status).to.equal(200);
    const index = await request(t.app).get('/phone/index.html');
    expect(index.text).to.not.match(/https?:\/\//);
  });

  it('config.json tells the page the SIP WebSocket URL and domain, never cached', async () => {
    const r = await request(t.app).get('/phone/config.json');
    expect(r.status).to.equal(200);
    expect(r.body).to.deep.equal({ ws_url: 'wss://sip.example.test:7443/ws', sip_domain: 'example.test' });
    expect(r.headers['cache-control']).to.equal('no-store');
  });

  it('unknown files and path traversal are 404, not files outside the build', async () => {
    expect((await request(t.app).get('/phone/nope.js')).status).to.equal(404);
    const trav = await request(t.app).get('/phone/..%2f..%2fpackage.json');
    expect(trav.status).to.be.oneOf([400, 403, 404]);
    expect(trav.text).to.not.contain('"dependencies"');
    expect((await request(t.app).get('/phone/.hidden')).status).to.equal(404);
  });

  it('without SIP_WSS_PUBLIC_URL the CSP allows wss: (the user types the URL) and config says null', async () => {
    const t2 = await buildTestApp();
    try {
      const r = await request(t2.app).get('/phone/config.json');
      expect(r.body.ws_url).to.equal(null);
      expect(String(r.headers['content-security-policy'])).to.contain("connect-src 'self' wss:;");
    } finally {
      await t2.close();
    }
    expect(phoneCsp('ws://127.0.0.1:5066')).to.contain("connect-src 'self' ws://127.0.0.1:5066;");
  });

  it('a missing build answers 503 with the command that builds it', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'phone-empty-'));
    const app = express();
    app.use('/phone', webphoneRouter(t.ctx, { dir: empty }));
    const r = await request(app).get('/phone/');
    expect(r.status).to.equal(503);
    expect(r.text).to.contain('scripts/build-web.ts phone');
    fs.rmSync(empty, { recursive: true, force: true });
  });
});
