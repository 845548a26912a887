// POST /v1.0/customer/webhook_test (an extension): a webhook_test event of the account that takes the
// ordinary delivery path (event stream, delivery row, signature, egress policy) to a real loopback
// receiver, and shows in GET /webhook_deliveries?event_id=. No webhook: 400; a webhook the egress
// policy refuses: the delivery is `refused` and nothing reaches the receiver.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { until } from '../../testkit/media-app/harness';
import { startWebhooks, type WebhookService } from '../../control-api/webhooks';
import { verify, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../control-api/webhooks/sign';
import { newId } from '../../core/ids';
import { eventPublisher } from '../../core/events/bus';
import { publishResourceEvent } from '../../core/events/catalogue';

interface Got {
  body: string;
  signature: string;
  timestamp: string;
}

async function receiver(host: string): Promise<{ port: number; got: Got[]; close(): Promise<void> }> {
  const got: Got[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      got.push({ body, signature: String(req.headers[SIGNATURE_HEADER.toLowerCase()] ?? ''), timestamp: String(req.headers[TIMESTAMP_HEADER.toLowerCase()] ?? '') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    got,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('POST /v1.0/customer/webhook_test: a test event through the real webhook delivery', function () {
  this.timeout(60_000);
  let t: TestApp;
  let hooks: WebhookService;
  let f: Fixture;
  const api = (method: 'get' | 'post' | 'put', p: string) => request(t.app)[method](`/v1.0${p}`).query({ accesskey: f.accesskey });

  before(async () => {
    // the receiver is on 127.0.0.1: that range is opened explicitly, [::1] is not
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' } });
    hooks = await startWebhooks(t.ctx, { group: `webhook-test-${newId()}`, queue: `webhook-test-${newId()}` });
  });
  beforeEach(async () => {
    f = await createFixture(t.ctx);
  });
  after(async () => {
    await hooks?.close();
    await t?.close();
  });

  it('without a webhook: 400 INVALID_ARGUMENT naming webhook_uri, nothing published', async () => {
    const r = await api('post', '/customer/webhook_test');
    expect(r.status).to.equal(400);
    expect(r.body.error.reason).to.equal('INVALID_ARGUMENT');
    expect(r.body.error.details).to.deep.equal([{ field: 'webhook_uri' }]);
    expect((await api('get', '/webhook_deliveries')).body.result).to.deep.equal([]);
  });

  it('a body is refused (the operation takes none)', async () => {
    const r = await api('post', '/customer/webhook_test').send({ event_type: 'call_hangup' });
    expect(r.status).to.equal(400);
    expect(r.body.error.reason).to.be.a('string');
  });

  it('reaches the loopback receiver signed, as a webhook_test of the account, and the log shows it delivered', async () => {
    const rx = await receiver('127.0.0.1');
    try {
      const uri = `http://127.0.0.1:${rx.port}/hook`;
      expect((await api('put', '/customer').send({ webhook_method: 'POST', webhook_uri: uri })).status).to.equal(200);
      const sent = await api('post', '/customer/webhook_test');
      expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
      expect(sent.body).to.include({ event_type: 'webhook_test', webhook_uri: uri, webhook_method: 'POST' });
      await until(async () => (rx.got.length > 0 ? true : null), 10_000, 'the test event at the receiver');
      const got = rx.got[0]!;
      const body = JSON.parse(got.body) as { event_type: string; topic: string; data: { customer_id: string; id: string } };
      expect(body.event_type).to.equal('webhook_test');
      expect(body.topic).to.equal(sent.body.topic);
      expect(body.topic).to.equal(`customer_id:${f.customer.id}:webhook:${body.data.id}`);
      expect(body.data.customer_id).to.equal(f.customer.id);
      const secret = ((await t.ctx.db('customers').where({ id: f.customer.id }).first('webhook_secret')) as { webhook_secret: string }).webhook_secret;
      expect(verify(secret, got.signature, got.timestamp, got.body)).to.equal(true);
      const d = await until(
        async () => {
          const l = (await api('get', '/webhook_deliveries').query({ event_id: sent.body.event_id })).body.result as { status: string; response_status: number; event_type: string; uri: string }[];
          return l[0]?.status === 'delivered' ? l[0] : null;
        },
        10_000,
        'delivered in the log',
      );
      expect(d).to.include({ event_type: 'webhook_test', response_status: 200, uri });
      await new Promise((r) => setTimeout(r, 500));
      expect(rx.got).to.have.length(1);
      expect(((await api('get', '/webhook_deliveries')).body.result as unknown[]).length).to.equal(1);
    } finally {
      await rx.close();
    }
  });

  it('goes through the egress policy: a webhook on a range not opened is refused, nothing is sent', async () => {
    const rx = await receiver('::1');
    try {
      // [::1] is refused when set through the API; a value stored before the policy is still checked on sending
      await t.ctx
        .db('customers')
        .where({ id: f.customer.id })
        .update({ webhook_uri: `http://[::1]:${rx.port}/hook`, webhook_method: 'POST' });
      const sent = await api('post', '/customer/webhook_test');
      expect(sent.status).to.equal(202);
      const d = await until(
        async () => {
          const l = (await api('get', '/webhook_deliveries').query({ event_id: sent.body.event_id })).body.result as { status: string; error: string }[];
          return l[0] && l[0].status !== 'pending' ? l[0] : null;
        },
        10_000,
        'the delivery settled',
      );
      expect(d.status).to.equal('refused');
      expect(d.error).to.not.equal('');
      await new Promise((r) => setTimeout(r, 300));
      expect(rx.got).to.have.length(0);
    } finally {
      await rx.close();
    }
  });

  it('a just-saved webhook gets the test event (no stale cached address)', async () => {
    const rx = await receiver('127.0.0.1');
    try {
      // an event of the account while it has no webhook: the service caches "no webhook" for a second...
      await publishResourceEvent(eventPublisher(t.ctx), 'number_updated', { id: newId(), customer_id: f.customer.id });
      await new Promise((r) => setTimeout(r, 300));
      // ...and the test sent right after setting one still reaches it
      expect((await api('put', '/customer').send({ webhook_method: 'POST', webhook_uri: `http://127.0.0.1:${rx.port}/hook` })).status).to.equal(200);
      expect((await api('post', '/customer/webhook_test')).status).to.equal(202);
      await until(async () => (rx.got.some((g) => g.body.includes('"webhook_test"')) ? true : null), 10_000, 'the test event at the receiver');
    } finally {
      await rx.close();
    }
  });
});
