// The webhook signing secret (control-api/webhooks/README.md): reads show it masked (last 4
// characters), POST /v1.0/customer/webhook_secret makes a new one and answers it whole, once; and the
// deliveries after a rotation are signed with the new secret at once, through the real webhook
// service to a real loopback receiver (the service kept each secret 5 s, so a rotation signed on
// with the old one).
import http from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createAgent, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { listenHook, type HookReceiver } from '../../testkit/hook-receiver';
import { startWebhooks, type WebhookService } from '../../control-api/webhooks';
import { verify, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../control-api/webhooks/sign';
import { newId } from '../../core/ids';
import { Permission } from '../../core/permissions';

interface Got {
  body: string;
  signature: string;
  timestamp: string;
}

/** A loopback receiver whose `next()` resolves with the next request that arrives. */
async function receiver(): Promise<HookReceiver<Got> & { next(): Promise<Got> }> {
  const got: Got[] = [];
  const waiting: ((g: Got) => void)[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const g = { body, signature: String(req.headers[SIGNATURE_HEADER.toLowerCase()] ?? ''), timestamp: String(req.headers[TIMESTAMP_HEADER.toLowerCase()] ?? '') };
      got.push(g);
      res.writeHead(200).end('ok');
      waiting.shift()?.(g);
    });
  });
  const hook = await listenHook(server, got);
  return { ...hook, next: () => new Promise<Got>((r) => waiting.push(r)) };
}

const masked = (secret: string) => `${'*'.repeat(secret.length - 4)}${secret.slice(-4)}`;

describe('the webhook signing secret: masked on reads, rotated by POST /customer/webhook_secret', function () {
  this.timeout(60_000);
  let t: TestApp;
  let hooks: WebhookService;
  let f: Fixture;
  const api = (method: 'get' | 'post' | 'put', p: string) => request(t.app)[method](`/v1.0${p}`).query({ accesskey: f.accesskey });
  const stored = async () => ((await t.ctx.db('customers').where({ id: f.customer.id }).first('webhook_secret')) as { webhook_secret: string }).webhook_secret;

  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' } });
    hooks = await startWebhooks(t.ctx, { group: `webhook-secret-${newId()}`, queue: `webhook-secret-${newId()}` });
  });
  beforeEach(async () => {
    f = await createFixture(t.ctx);
  });
  after(async () => {
    await hooks?.close();
    await t?.close();
  });

  it('GET and PUT /customer show the secret masked: its last 4 characters, never whole', async () => {
    const secret = await stored();
    expect(secret).to.have.length.above(20);
    for (const res of [await api('get', '/customer'), await api('put', '/customer').send({ name: 'Acme' })]) {
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ webhook_secret: masked(secret), webhook_secret_set: true });
      expect(JSON.stringify(res.body)).to.not.contain(secret);
    }
  });

  it('the rotation answers the new secret whole, once, not cached; reads show it masked after; admins only, no body', async () => {
    const before = await stored();
    const r = await api('post', '/customer/webhook_secret');
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.headers['cache-control']).to.equal('no-store');
    expect(r.body).to.include({ id: f.customer.id, email: f.customer.email, webhook_secret_set: true });
    expect(r.body.webhook_secret).to.match(/^[A-Za-z0-9_-]{32}$/);
    expect(r.body.webhook_secret).to.not.equal(before);
    expect(await stored()).to.equal(r.body.webhook_secret);
    const after = await api('get', '/customer');
    expect(after.body.webhook_secret).to.equal(masked(r.body.webhook_secret));
    expect(JSON.stringify(after.body)).to.not.contain(r.body.webhook_secret);
    // a manager and an agent may not rotate it; a body is refused
    for (const permission of [Permission.CustomerManager, Permission.CustomerAgent]) {
      const { token } = await createAgent(t.ctx, f.customer.id, permission);
      const refused = await request(t.app).post('/v1.0/customer/webhook_secret').set('Authorization', `Bearer ${token}`);
      expect(refused.status, String(permission)).to.equal(403);
    }
    expect((await api('post', '/customer/webhook_secret').send({ webhook_secret: 'mine-0123456789abcdef0123' })).status).to.equal(400);
    expect(await stored()).to.equal(r.body.webhook_secret);
  });

  it('the delivery right after a rotation is signed with the new secret, and not with the old one', async () => {
    const rx = await receiver();
    try {
      expect((await api('put', '/customer').send({ webhook_method: 'POST', webhook_uri: rx.url })).status).to.equal(200);
      const old = await stored();
      const first = rx.next();
      expect((await api('post', '/customer/webhook_test')).status).to.equal(202);
      const a = await first;
      expect(verify(old, a.signature, a.timestamp, a.body)).to.equal(true);
      // rotate, then the next event at once
      const rotated = (await api('post', '/customer/webhook_secret')).body.webhook_secret as string;
      const second = rx.next();
      expect((await api('post', '/customer/webhook_test')).status).to.equal(202);
      const b = await second;
      expect(JSON.parse(b.body).event_type).to.equal('webhook_test');
      expect(verify(rotated, b.signature, b.timestamp, b.body), 'signed with the new secret').to.equal(true);
      expect(verify(old, b.signature, b.timestamp, b.body), 'not with the old one').to.equal(false);
      expect(b.body).to.not.contain(rotated).and.not.contain(old);
    } finally {
      await rx.close();
    }
  });
});
