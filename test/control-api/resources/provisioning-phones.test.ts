// Which phone gets which document (issue #32 items 8 and 9): the family from the User-Agent as real
// phones send it, a 400 without credentials when it names none, and, with no SIP_ADVERTISED_HOST,
// the outbound proxy taken from the Host header the phone used (validated, port stripped, encoded for
// each format). The logs of every fetch carry neither the token, the customer secret nor the password.
import { Writable } from 'node:stream';
import { expect } from 'chai';
import request from 'supertest';
import pino from 'pino';
import { actors, as, reset } from './support';
import { buildTestApp, type TestApp } from '../../../testkit/api';
import { createProvisioningRouter } from '../../../control-api/provisioning/router';
import { parseXmlStrict, find } from './xml-check';
import { UA, ciscoXml, fanvilXml, grandstreamXml, polycomPhone, yealinkCfg } from './provisioning-files';

const PASSWORD = 'phones-secret-pass-9';
const MAC = '001565a0b0c0';

describe('provisioning: phone families, Host-header proxy, logs', function () {
  let t: TestApp;
  const logLines: string[] = [];

  before(async () => {
    const sink = new Writable({
      write(chunk, _enc, cb) {
        logLines.push(String(chunk));
        cb();
      },
    });
    const logger = pino({ level: 'trace' }, sink);
    // Defaults: no SIP_ADVERTISED_HOST, no PROVISIONING_SIP_PROXY. The provisioning router logs to `sink`.
    t = await buildTestApp({
      env: { RATE_LIMIT_SCALE: '0', SIP_DOMAIN: 'sip.example.test', PUBLIC_URL: 'https://pbx.example.test', SIP_PORT: '5080' },
      app: { provisioningRouter: (ctx) => createProvisioningRouter({ ...ctx, logger }) },
    });
  });
  after(async () => t.close());

  /** An extension and its token; with `directory`, the extension bound to MAC and the customer's DHCP URL too. */
  async function setup(directory = false) {
    await reset();
    logLines.length = 0;
    const h = { t, app: t.app, close: async () => undefined };
    const a = await actors(h);
    const ext = (await as(h, a.admin).post('/v1.0/extensions').send({ extension: '5001', password: PASSWORD })).body;
    const tok = (await as(h, a.admin).post(`/v1.0/extensions/${ext.id}/provisioning-token`)).body;
    if (!directory) return { ext, token: tok.token as string, dirPath: '', secret: '' };
    expect((await as(h, a.admin).put(`/v1.0/extensions/${ext.id}`).send({ mac: MAC })).status).to.equal(200);
    const dir = (await as(h, a.admin).post('/v1.0/customer/provisioning-url')).body;
    return { ext, token: tok.token as string, dirPath: new URL(dir.url).pathname, secret: new URL(dir.url).pathname.split('/')[3]! };
  }
  const fetch = (path: string, headers: Record<string, string> = {}) => {
    const r = request(t.app).get(path);
    for (const [k, v] of Object.entries(headers)) r.set(k, v);
    return r;
  };

  it('each real User-Agent gets its family; format= wins', async () => {
    const { token } = await setup();
    const base = `/provisioning/extension?token=${token}`;
    const root = async (ua: string) => {
      const r = await fetch(base, { 'User-Agent': ua });
      expect(r.status, ua).to.equal(200);
      return r.text.startsWith('#!version') ? 'yealink-cfg' : parseXmlStrict(r.text).name;
    };
    expect(await root(UA.yealink)).to.equal('yealink-cfg');
    expect(await root(UA.polycom)).to.equal('polycomConfig');
    expect(await root('Poly/7.0.2 Edge E350')).to.equal('polycomConfig');
    expect(await root(UA.grandstream)).to.equal('gs_provision');
    expect(await root(UA.spa)).to.equal('flat-profile');
    expect(await root(UA.mpp)).to.equal('flat-profile');
    expect(await root(UA.fanvil)).to.equal('sysConf');
    expect(await root(UA.linphone)).to.equal('config');
    expect(await root('LinphoneiOS/5.2.1 (iPhone) LinphoneSDK/5.3.0')).to.equal('config');
    expect(await root(UA.snom)).to.equal('settings');
    const forced = await fetch(`${base}&format=cisco`, { 'User-Agent': UA.yealink });
    expect(parseXmlStrict(forced.text).name).to.equal('flat-profile');
  });

  it('a User-Agent naming no supported phone, without format=, is a clear 400 with no credentials', async () => {
    const { token } = await setup();
    for (const ua of [undefined, 'curl/8.5.0', 'Unknown', 'Mozilla/5.0 (X11; Linux x86_64)', 'Avaya one-X Deskphone', 'Ciscoish/1.0']) {
      const r = await fetch(`/provisioning/extension?token=${token}`, ua ? { 'User-Agent': ua } : {});
      expect(r.status, ua).to.equal(400);
      expect(r.headers['content-type']).to.match(/^application\/json/);
      expect(r.headers['cache-control']).to.contain('no-store');
      expect(r.body.error.status).to.equal('INVALID_ARGUMENT');
      expect(r.body.error.message).to.contain('format=').and.contain('cisco').and.contain('fanvil');
      expect(r.text).to.not.contain(PASSWORD).and.not.contain('5001');
    }
  });

  it('without SIP_ADVERTISED_HOST every format names the host the phone fetched from (port stripped) as outbound proxy', async () => {
    const { token, ext } = await setup();
    const doc = (format: string, host: string) =>
      fetch(`/provisioning/extension?token=${token}&format=${format}`, { Host: host }).then((r) => {
        expect(r.status, `${format} ${host} ${r.text}`).to.equal(200);
        return r.text;
      });
    for (const [host, proxy] of [
      ['pbx.lan:8080', 'pbx.lan'],
      ['192.0.2.7', '192.0.2.7'],
      ['PBX.Example.TEST.', 'pbx.example.test'],
    ] as const) {
      const y = yealinkCfg(await doc('yealink', host));
      expect(y.get('account.1.outbound_proxy.1.address'), host).to.equal(proxy);
      expect(y.get('account.1.outbound_proxy.1.port')).to.equal('5080');
      expect(y.get('account.1.sip_server.1.address')).to.equal(ext.domain_name);
      expect(grandstreamXml(await doc('grandstream', host)).p.P48).to.equal(`${proxy}:5080`);
      expect(polycomPhone(await doc('polycom', host))['reg.1.outboundProxy.address']).to.equal(proxy);
      expect(ciscoXml(await doc('cisco', host)).Outbound_Proxy_1_).to.equal(`${proxy}:5080`);
      expect(fanvilXml(await doc('fanvil', host)).ProxyAddr).to.equal(proxy);
      const lin = parseXmlStrict(await doc('linphone', host));
      expect(find(lin, (e) => e.attrs.name === 'reg_proxy')?.text).to.equal(`<sip:${proxy}:5080;transport=udp>`);
      const snom = parseXmlStrict(await doc('snom', host));
      expect(find(snom, (e) => e.name === 'user_outbound')?.text).to.equal(`${proxy}:5080;transport=udp`);
    }
    const v6 = parseXmlStrict(await doc('linphone', '[2001:DB8::5]:8443'));
    expect(find(v6, (e) => e.attrs.name === 'reg_proxy')?.text).to.equal('<sip:[2001:db8::5]:5080;transport=udp>');
    // The directory files too.
    const file = await fetch(`/provisioning/extension?token=${token}/${MAC}.cfg`, { Host: 'pbx.lan:8080', 'User-Agent': UA.yealink });
    expect(yealinkCfg(file.text).get('account.1.outbound_proxy.1.address')).to.equal('pbx.lan');
  });

  it('a Host header that is no host name or address is a 400 without credentials, never written into a document', async () => {
    const { token, dirPath } = await setup(true);
    const bad = [
      'evil"><x a=\'',
      'pbx.lan\nP34 = x',
      'a b',
      'pbx.lan:99999',
      'pbx.lan:',
      '-bad-.example',
      'h_o.example',
      '1.2.3.999',
      '[::1',
      '[fe80::1%eth0]',
      'user@pbx.lan',
      'x'.repeat(254),
      '%70bx.lan',
    ];
    for (const host of bad) {
      for (const path of [`/provisioning/extension?token=${token}&format=grandstream`, `${dirPath}${MAC}.cfg`]) {
        let r;
        try {
          r = await fetch(path, { Host: host, 'User-Agent': UA.yealink });
        } catch (e) {
          // Node's HTTP client refuses control characters in a header itself: no request was sent.
          expect(host, (e as Error).message).to.match(/[\n]/);
          continue;
        }
        expect(r.status, `${host} ${path}`).to.equal(400);
        expect(r.text, host).to.not.contain(PASSWORD);
        expect(r.body.error.message, host).to.contain('Host header');
      }
    }
    // The common files carry no account and need no proxy: served whatever the Host.
    expect((await fetch(`${dirPath}y000000000108.cfg`, { Host: 'a b', 'User-Agent': UA.yealink })).status).to.equal(200);
  });

  it('logs each fetch without the token, the customer secret or the password', async () => {
    const { token, secret, dirPath } = await setup(true);
    const fetches = [
      fetch(`/provisioning/extension?token=${token}`, { 'User-Agent': UA.yealink }),
      fetch(`/provisioning/extension?token=${token}`, { 'User-Agent': 'curl/8.5.0' }),
      fetch(`/provisioning/extension?token=${token}/cfg${MAC}.xml`, { 'User-Agent': UA.grandstream }),
      fetch(`/provisioning/extension/${MAC}.cfg?token=${token}`, { 'User-Agent': UA.fanvil }),
      fetch(`${dirPath}${MAC}.cfg`, { 'User-Agent': UA.yealink }),
      fetch(`${dirPath}0004f2000000.cfg`, { 'User-Agent': UA.polycom }),
      fetch(`${dirPath}${MAC}.cfg`, { 'User-Agent': UA.yealink, Host: 'bad host' }),
    ];
    const statuses = [];
    for (const f of fetches) statuses.push((await f).status);
    expect(statuses).to.deep.equal([200, 400, 200, 200, 200, 404, 400]);
    const logs = logLines.join('');
    expect(logLines.filter((l) => l.includes('"provisioning"'))).to.have.length(7);
    expect(logs).to.contain('provisioning document served').and.contain('provisioning fetch refused');
    expect(logs).to.not.contain(PASSWORD);
    expect(logs).to.not.contain(token);
    expect(logs).to.not.contain(secret);
  });
});
