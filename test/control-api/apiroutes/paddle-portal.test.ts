// POST /billing_account/paddle_portal_session against a stand-in of Paddle's Billing API on loopback
// (test/support/paddle-server.ts, a real HTTP server answering POST /customers/{id}/portal-sessions as
// Paddle does, checking the bearer key): the operator links a billing account to a Paddle customer
// (PUT /billing_accounts/{id}, ProjectSuperAdmin only, `ctm_...`), the customer's admin gets the
// portal's overview URL. No key: 503; no link: 400; a Paddle error (403, 500, not JSON, no answer): 503 without
// Paddle's text; below admin: 403.
import { expect } from 'chai';
import { as } from '../resources/support';
import { useParties } from './support';
import { PADDLE_SECRET_TEXT, startPaddleServer, type PaddleServer } from '../../support/paddle-server';

const KEY = 'pdl_live_apikey_0123456789abcdef';
const CTM = 'ctm_01h8bxq9f3e4t5a6g7h8j9k0';

describe('POST /billing_account/paddle_portal_session (Paddle)', function () {
  this.timeout(20000);
  const pt = useParties({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
  let paddle: PaddleServer;
  const saved = { url: process.env.PADDLE_API_URL, key: process.env.PADDLE_API_KEY };

  before(async () => {
    paddle = await startPaddleServer(KEY);
    process.env.PADDLE_API_URL = paddle.url;
  });
  after(async () => {
    for (const [k, v] of [
      ['PADDLE_API_URL', saved.url],
      ['PADDLE_API_KEY', saved.key],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await paddle?.close();
  });
  beforeEach(() => {
    paddle.seen.length = 0;
    paddle.mode = 'ok';
    process.env.PADDLE_API_KEY = KEY;
  });

  const session = (token: string) => as(pt.h, token).post('/v1.0/billing_account/paddle_portal_session');
  const ownAccount = async (token: string) => String((await as(pt.h, token).get('/v1.0/billing_account')).body.id);
  const link = async (ctm: string) =>
    as(pt.h, pt.su.token)
      .put(`/v1.0/billing_accounts/${await ownAccount(pt.a.admin)}`)
      .send({ paddle_customer_id: ctm });

  it('answers the portal URL Paddle makes for the linked customer', async () => {
    const l = await link(CTM);
    expect(l.status, JSON.stringify(l.body)).to.equal(200);
    expect(l.body.paddle_customer_id).to.equal(CTM);
    const r = await session(pt.a.admin);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.deep.equal({ url: paddle.overview(CTM) });
    expect(paddle.seen).to.deep.equal([{ method: 'POST', path: `/customers/${CTM}/portal-sessions`, auth: `Bearer ${KEY}`, type: 'application/json', body: {} }]);
  });

  it('no PADDLE_API_KEY: 503; no link: 400; Paddle refusing or failing: 503 without its text', async () => {
    delete process.env.PADDLE_API_KEY;
    const nokey = await session(pt.a.admin);
    expect([nokey.status, nokey.body.error?.reason]).to.deep.equal([503, 'SERVICE_UNAVAILABLE']);
    expect(nokey.body.error.message).to.match(/not configured/);
    process.env.PADDLE_API_KEY = KEY;
    const nolink = await session(pt.a.admin);
    expect([nolink.status, nolink.body.error?.reason]).to.deep.equal([400, 'INVALID_ARGUMENT']);
    expect(nolink.body.error.message).to.equal('no Paddle subscription is linked to this billing account');
    expect(paddle.seen, 'Paddle is not asked without a key or a link').to.deep.equal([]);
    expect((await link(CTM)).status).to.equal(200);
    for (const m of ['error500', 'notjson'] as const) {
      paddle.mode = m;
      const r = await session(pt.a.admin);
      expect([r.status, r.body.error?.reason], m).to.deep.equal([503, 'SERVICE_UNAVAILABLE']);
      expect(JSON.stringify(r.body), m).to.not.include(PADDLE_SECRET_TEXT);
    }
    paddle.mode = 'ok';
    process.env.PADDLE_API_KEY = 'pdl_live_apikey_wrong000000000';
    const refused = await session(pt.a.admin);
    expect(refused.status).to.equal(503);
    expect(JSON.stringify(refused.body)).to.not.include(PADDLE_SECRET_TEXT);
    expect(paddle.seen.length, 'Paddle was asked each time').to.equal(3);
  });

  it('Paddle not answering: 503 once the 10 s deadline passes', async function () {
    this.timeout(30000);
    expect((await link(CTM)).status).to.equal(200);
    paddle.mode = 'hang';
    const t0 = Date.now();
    const r = await session(pt.a.admin);
    expect([r.status, r.body.error?.reason]).to.deep.equal([503, 'SERVICE_UNAVAILABLE']);
    expect(Date.now() - t0).to.be.within(9000, 15000);
    expect(paddle.seen.length).to.equal(1);
  });

  it("only the customer's admin; only the operator sets the link, in ctm_ form", async () => {
    expect((await link(CTM)).status).to.equal(200);
    for (const token of [pt.a.manager, pt.a.agent]) expect((await session(token)).status).to.equal(403);
    const other = await session(pt.other.admin);
    expect(other.status, 'another customer has no link').to.equal(400);
    for (const bad of ['cus_01h8bxq9f3e4t5a6g7h8j9k0', 'ctm_', 'ctm_01H8BXQ9F3E4T5A6G7H8J9K0', 'ctm_01h8/../x', 42]) {
      const r = await link(bad as string);
      expect([r.status, r.body.error?.reason], String(bad)).to.deep.equal([400, 'INVALID_ARGUMENT']);
    }
    const own = await ownAccount(pt.other.admin);
    const byCustomer = await as(pt.h, pt.other.admin).put(`/v1.0/billing_accounts/${own}`).send({ paddle_customer_id: CTM });
    expect([byCustomer.status, byCustomer.body.error?.reason]).to.deep.equal([403, 'PERMISSION_DENIED']);
    await as(pt.h, pt.other.admin).put('/v1.0/billing_account').send({ name: 'n', paddle_customer_id: CTM });
    expect((await as(pt.h, pt.other.admin).get('/v1.0/billing_account')).body.paddle_customer_id).to.equal('');
    expect((await session(pt.other.admin)).status, 'still no link').to.equal(400);
    const unlinked = await link('');
    expect([unlinked.status, unlinked.body.paddle_customer_id]).to.deep.equal([200, '']);
    expect((await session(pt.a.admin)).status).to.equal(400);
  });
});
