// The carriers' APIs (Paddle for the billing portal, Telnyx for providers/setup) are reached only through
// the egress policy: pointed at loopback spellings without the operator allowlist, nothing is sent and the
// caller gets 503 (private and link-local ranges are refused by the same policy: test/core/net/).
import http from 'node:http';
import { expect } from 'chai';
import { as } from '../control-api/resources/support';
import { useParties } from '../control-api/apiroutes/support';
import { startPaddleServer, type PaddleServer } from '../support/paddle-server';

const KEY = 'pdl_live_apikey_0123456789abcdef';

describe('security: carrier APIs go through the egress policy', function () {
  this.timeout(30000);
  const pt = useParties({}); // no EGRESS_ALLOW_CIDRS
  let paddle: PaddleServer;
  let telnyx: http.Server;
  let telnyxSeen = 0;
  const saved = { p: process.env.PADDLE_API_URL, k: process.env.PADDLE_API_KEY, t: process.env.TELNYX_API_URL };

  before(async () => {
    paddle = await startPaddleServer(KEY);
    telnyx = http.createServer((_req, res) => {
      telnyxSeen++;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"data":{}}');
    });
    await new Promise<void>((r) => telnyx.listen(0, '127.0.0.1', r));
    process.env.PADDLE_API_KEY = KEY;
  });
  after(async () => {
    for (const [k, v] of [
      ['PADDLE_API_URL', saved.p],
      ['PADDLE_API_KEY', saved.k],
      ['TELNYX_API_URL', saved.t],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await paddle?.close();
    telnyx?.close();
  });

  const spellings = (port: number) => [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://127.1:${port}`, `http://[::ffff:127.0.0.1]:${port}`];

  it('Paddle at a loopback address: 503, nothing sent', async () => {
    const account = String((await as(pt.h, pt.a.admin).get('/v1.0/billing_account')).body.id);
    const l = await as(pt.h, pt.su.token).put(`/v1.0/billing_accounts/${account}`).send({ paddle_customer_id: 'ctm_01h8bxq9f3e4t5a6g7h8j9k0' });
    expect(l.status, JSON.stringify(l.body)).to.equal(200);
    const port = Number(new URL(paddle.url).port);
    for (const url of spellings(port)) {
      process.env.PADDLE_API_URL = url;
      const r = await as(pt.h, pt.a.admin).post('/v1.0/billing_account/paddle_portal_session');
      expect(r.status, `${url}: ${JSON.stringify(r.body)}`).to.equal(503);
    }
    expect(paddle.seen).to.deep.equal([]);
  });

  it('Telnyx at a loopback address: no provider written, nothing sent', async () => {
    const port = (telnyx.address() as { port: number }).port;
    for (const url of spellings(port)) {
      process.env.TELNYX_API_URL = `${url}/v2`;
      const r = await as(pt.h, pt.su.token)
        .post('/v1.0/providers/setup')
        .send({ carrier: 'telnyx', name: 't', credentials: { api_key: 'KEY0123456789abcdef' } });
      expect(r.status, `${url}: ${JSON.stringify(r.body)}`).to.equal(503);
    }
    expect(telnyxSeen).to.equal(0);
    expect(Number((await pt.h.t.ctx.db('providers').whereNull('tm_delete').count({ n: '*' }).first())?.n ?? 0)).to.equal(0);
  });
});
