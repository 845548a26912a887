// Issue #32's done-when: a desk phone provisioned only by pointing it at the URL registers with the
// platform's defaults (no SIP_ADVERTISED_HOST, no proxy setting). The test fetches over real HTTP the
// way a Yealink does (its User-Agent; the common file y0000000000xx.cfg, then {mac}.cfg, appended to
// the URL as to a directory), reads the account out of the document (server, outbound proxy, user,
// password) and registers a real SIP UA with exactly those values: baresip for the extension's
// token URL, sipp (a Yealink-like REGISTER: Request-URI the server, sent to the outbound proxy) for
// the customer's DHCP option 66 URL.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { type TestApp, type Fixture } from '../../testkit/api';
import { sipp, until, type Platform } from '../../testkit/media-app/harness';
import { Baresip } from '../../testkit/baresip';
import { toneWav } from './audio';
import { useProvisioningStack } from '../../testkit/provisioning-stack';

const YEALINK_UA = 'Yealink SIP-T54W 96.86.0.100';

/** GET over loopback HTTP as the phone sends it. */
function phoneGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { 'User-Agent': YEALINK_UA, Accept: '*/*' } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/** The account a Yealink applies from what it fetched: the common file first, then its own. */
async function yealinkFetch(dirUrl: string, mac: string) {
  const common = await phoneGet(`${dirUrl}/y000000000108.cfg`);
  expect(common.status, common.body).to.equal(200);
  const own = await phoneGet(`${dirUrl}/${mac}.cfg`);
  expect(own.status, own.body).to.equal(200);
  const kv = new Map<string, string>();
  for (const text of [common.body, own.body]) {
    for (const line of text.split('\n')) {
      const m = /^([a-z0-9_.]+) = (.*)$/.exec(line);
      if (m) kv.set(m[1]!, m[2]!);
    }
  }
  expect(common.body).to.not.match(/password/);
  const need = (k: string) => {
    const v = kv.get(k);
    expect(v, k).to.be.a('string').and.not.equal('');
    return v!;
  };
  expect(need('account.1.enable')).to.equal('1');
  expect(need('account.1.outbound_proxy_enable')).to.equal('1');
  return {
    server: need('account.1.sip_server.1.address'),
    proxy: `${need('account.1.outbound_proxy.1.address')}:${need('account.1.outbound_proxy.1.port')}`,
    user: need('account.1.user_name'),
    authName: need('account.1.auth_name'),
    password: need('account.1.password'),
  };
}

function yealinkRegister(server: string, user: string): string {
  const req = (cseq: number, auth: boolean) => `<send retrans="500"><![CDATA[
REGISTER sip:${server} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:${user}@${server}>;tag=[call_number]
To: <sip:${user}@${server}>
Call-ID: [call_id]
CSeq: ${cseq} REGISTER
Contact: <sip:${user}@[local_ip]:[local_port]>
Expires: 3600
Max-Forwards: 70
User-Agent: ${YEALINK_UA}
${auth ? '[authentication]\n' : ''}Content-Length: 0

]]></send>`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="yealink-register">
${req(1, false)}
<recv response="401" auth="true"/>
${req(2, true)}
<recv response="200"/>
</scenario>`;
}

describe('edge: a Yealink-style directory fetch registers with defaults', function () {
  this.timeout(90_000);
  let p: Platform;
  let t: TestApp;
  let f: Fixture;
  let base = '';
  const phones: Baresip[] = [];
  const dirs: string[] = [];

  // The platform's defaults: SIP_ADVERTISED_HOST and PROVISIONING_SIP_PROXY unset.
  useProvisioningStack((s) => ({ p, t, f, base } = s));
  afterEach(async () => {
    await Promise.all(phones.splice(0).map((b) => b.dispose()));
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  const api = (m: 'post' | 'get', url: string) => request(t.app)[m](`/v1.0${url}`).query({ accesskey: f.accesskey });

  it('the token URL as a directory (no MAC bound: the token names the extension): baresip registers with the account read from {mac}.cfg', async () => {
    const ext = (await api('post', '/extensions').send({ extension: '7301', password: 'secret-pass-7301' })).body;
    const tok = (await api('post', `/extensions/${ext.id}/provisioning-token`)).body;
    // The URL the API hands out, with the platform's PUBLIC_URL replaced by where this test serves it.
    const url = `${base}${new URL(tok.url).pathname}${new URL(tok.url).search}`;
    const acc = await yealinkFetch(url, '805ec0112233');
    expect(acc).to.deep.equal({ server: ext.domain_name, proxy: `127.0.0.1:${p.sipPort}`, user: '7301', authName: '7301', password: 'secret-pass-7301' });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'yl-dir-'));
    dirs.push(dir);
    const mic = path.join(dir, 'mic.wav');
    toneWav(mic, 500);
    const phone = await Baresip.start({ user: acc.user, domain: acc.server, password: acc.password, outboundProxy: `sip:${acc.proxy}` }, mic);
    phones.push(phone);
    await until(async () => (await p.app.registrar.bindings.get(`${ext.username}@${ext.domain_name}`)).length > 0 || null, 20_000, 'baresip registered').catch((err: Error) => {
      throw new Error(`${err.message}\n${phone.log.slice(-1500)}`);
    });
  });

  it('the customer DHCP option 66 URL: the MAC selects the extension; a Yealink REGISTER (sipp) with those values registers', async () => {
    const ext = (await api('post', '/extensions').send({ extension: '7302', password: 'secret-pass-7302', mac: '805ec0445566' })).body;
    const dirUrl = (await api('post', '/customer/provisioning-url')).body.url as string;
    const url = `${base}${new URL(dirUrl).pathname}`.replace(/\/$/, '');
    expect((await phoneGet(`${url}/805ec0999999.cfg`)).status, 'an unbound MAC').to.equal(404);
    const acc = await yealinkFetch(url, '805ec0445566');
    expect(acc).to.deep.equal({ server: ext.domain_name, proxy: `127.0.0.1:${p.sipPort}`, user: '7302', authName: '7302', password: 'secret-pass-7302' });
    const r = await sipp(yealinkRegister(acc.server, acc.user), [acc.proxy, '-i', '127.0.0.1', '-m', '1', '-au', acc.authName, '-ap', acc.password]).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(await p.app.registrar.bindings.get(`${ext.username}@${ext.domain_name}`)).to.have.length(1);
  });
});
