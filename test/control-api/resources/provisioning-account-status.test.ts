// A frozen, expired or deleted account's phones get no configuration: the token URL, the DHCP option
// 66 URL and the QR code answer 403 in the envelope with the account gate's code (spec: Authentication
// 6), and never the SIP password. An active account's fetch on the same URLs still works.
import { expect } from 'chai';
import request from 'supertest';
import { actors, as, reset } from './support';
import { buildTestApp, type TestApp } from '../../../testkit/api';
import { UA } from './provisioning-files';
import type { CustomerStatus } from '../../../core/repos/customers';

const PASSWORD = 'status-secret-pass-7';
const MAC = '001565a0b0c1';

describe('provisioning: the account status gate', function () {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', SIP_DOMAIN: 'sip.example.test', PUBLIC_URL: 'https://pbx.example.test' } });
  });
  after(async () => t.close());

  async function setup() {
    await reset();
    const h = { t, app: t.app, close: async () => undefined };
    const a = await actors(h);
    const ext = (await as(h, a.admin).post('/v1.0/extensions').send({ extension: '5002', password: PASSWORD })).body;
    const tok = (await as(h, a.admin).post(`/v1.0/extensions/${ext.id}/provisioning-token`)).body;
    expect((await as(h, a.admin).put(`/v1.0/extensions/${ext.id}`).send({ mac: MAC })).status).to.equal(200);
    const dir = (await as(h, a.admin).post('/v1.0/customer/provisioning-url')).body;
    return { customerId: a.customerId, token: tok.token as string, dirPath: new URL(dir.url).pathname };
  }
  const setStatus = (id: string, status: CustomerStatus, tmDeletion: Date | null = null) => t.ctx.db('customers').where({ id }).update({ status, tm_deletion_scheduled: tmDeletion });
  const urls = (s: { token: string; dirPath: string }) => [`/provisioning/extension?token=${s.token}`, `/provisioning/extension/${MAC}.cfg?token=${s.token}`, `${s.dirPath}${MAC}.cfg`];

  it('an active account is served (the URLs under test work)', async () => {
    const s = await setup();
    for (const u of urls(s)) {
      const r = await request(t.app).get(u).set('User-Agent', UA.yealink);
      expect(r.status, u).to.equal(200);
      expect(r.text, u).to.include(PASSWORD);
    }
  });

  for (const [status, code] of [
    ['frozen', 'ACCOUNT_FROZEN'],
    ['expired', 'ACCOUNT_EXPIRED'],
    ['deleted', 'ACCOUNT_DELETED'],
  ] as const) {
    it(`a ${status} account gets 403 ${code} in the envelope and no password, on every URL and the QR code`, async () => {
      const s = await setup();
      await setStatus(s.customerId, status, status === 'frozen' ? new Date() : null);
      for (const u of urls(s)) {
        const r = await request(t.app).get(u).set('User-Agent', UA.yealink);
        expect(r.status, u).to.equal(403);
        expect(r.body.error?.reason, u).to.equal(code);
        expect(r.text, u).to.not.include(PASSWORD);
        expect(r.get('cache-control'), u).to.include('no-store');
      }
      if (status === 'frozen') expect((await request(t.app).get(urls(s)[0]!).set('User-Agent', UA.yealink)).body.error.details[0].recovery_endpoint).to.equal('DELETE /auth/unregister');
      const qr = await request(t.app).get(`/provisioning/extension/qr.png?token=${s.token}`);
      expect(qr.status).to.equal(403);
      expect(qr.body.error?.reason).to.equal(code);
    });
  }
});
