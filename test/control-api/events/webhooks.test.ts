import http from 'node:http';
import { listenHook } from '../../../testkit/hook-receiver';
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../../testkit/api';
import { startWebhooks, type WebhookService } from '../../../control-api/webhooks';
import { verify, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../../control-api/webhooks/sign';
import { EventPublisher } from '../../../core/events/bus';
import { publishResourceEvent } from '../../../core/events/catalogue';
import { webhookDeliveriesRepo } from '../../../core/repos/webhook-deliveries';
import { newId, EMPTY_UUID } from '../../../core/ids';
import { EgressPolicy, egressSettingsFromEnv } from '../../../core/net';
import type { WebhookMethod } from '../../../core/repos/customers';

interface Received {
  headers: http.IncomingHttpHeaders;
  method: string;
  body: string;
}

async function receiver(answer: (n: number) => number | 'hang'): Promise<{ url: string; got: Received[]; close(): Promise<void> }> {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      got.push({ headers: req.headers, method: req.method ?? '', body });
      const a = answer(got.length);
      if (a === 'hang') return;
      res.statusCode = a;
      res.end('ok');
    });
  });
  return listenHook(server, got);
}

async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('webhooks (real Redis stream, BullMQ, loopback receivers)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let hooks: WebhookService;
  let publisher: EventPublisher;
  const stream = `test-wh-${newId()}`;

  before(async () => {
    // the receivers are on loopback: opened explicitly
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' } });
    hooks = await startWebhooks(t.ctx, { stream, baseDelayMs: 100, maxAttempts: 3 });
    publisher = new EventPublisher(t.ctx.redis, stream);
  });
  after(async () => {
    await hooks.close();
    await t.ctx.redis.del(stream);
    await t.close();
  });

  async function customerWith(uri: string, method: WebhookMethod = 'POST'): Promise<Fixture> {
    const f = await createFixture(t.ctx);
    await t.ctx.db('customers').where({ id: f.customer.id }).update({ webhook_uri: uri, webhook_method: method });
    return f;
  }

  const callPayload = (f: Fixture, extra: Record<string, unknown> = {}) => ({ id: newId(), customer_id: f.customer.id, activeflow_id: EMPTY_UUID, status: 'dialing', ...extra });

  it('delivers every event, signed with the customer secret, in order', async () => {
    const r = await receiver(() => 200);
    try {
      const f = await customerWith(r.url, 'PUT');
      const secret = f.customer.webhook_secret;
      expect(secret).to.have.length.greaterThan(10);
      const types = ['call_created', 'call_ringing', 'call_progressing', 'call_hangup'] as const;
      const id = newId();
      for (const ty of types) await publishResourceEvent(publisher, ty, callPayload(f, { id }));
      await until(() => r.got.length >= 4);
      expect(r.got.map((g) => (JSON.parse(g.body) as { event_type: string }).event_type)).to.deep.equal([...types]);
      for (const g of r.got) {
        expect(g.method).to.equal('PUT');
        const ok = verify(secret, g.headers[SIGNATURE_HEADER.toLowerCase()] as string, g.headers[TIMESTAMP_HEADER.toLowerCase()] as string, g.body);
        expect(ok).to.equal(true);
        expect(verify('wrong-secret', g.headers[SIGNATURE_HEADER.toLowerCase()] as string, g.headers[TIMESTAMP_HEADER.toLowerCase()] as string, g.body)).to.equal(false);
        // A replay with the same signature but a changed timestamp or body fails.
        expect(verify(secret, g.headers[SIGNATURE_HEADER.toLowerCase()] as string, String(Number(g.headers[TIMESTAMP_HEADER.toLowerCase()]) + 1), g.body)).to.equal(false);
        const msg = JSON.parse(g.body) as { topic: string; timestamp: string; data: { id: string } };
        expect(msg.topic).to.equal(`customer_id:${f.customer.id}:call:${id}`);
        expect(msg.data.id).to.equal(id);
      }
      // An old timestamp is refused by the receiver check (replay window).
      const g = r.got[0]!;
      expect(verify(secret, g.headers[SIGNATURE_HEADER.toLowerCase()] as string, g.headers[TIMESTAMP_HEADER.toLowerCase()] as string, g.body, Math.floor(Date.now() / 1000) + 3600)).to.equal(false);

      // The delivery log is readable by the customer. A delivery is marked delivered once its response is
      // read back by the sender, which the receiver's answer precedes: wait for the fourth mark.
      const log = () => request(t.app).get('/v1.0/webhook_deliveries').query({ accesskey: f.accesskey });
      await until(async () => ((await log()).body.result as { status: string }[]).filter((d) => d.status === 'delivered').length >= 4);
      const res = await log();
      expect(res.status).to.equal(200);
      expect(res.body.result).to.have.length(4);
      expect(res.body.result.map((d: { status: string }) => d.status)).to.deep.equal(['delivered', 'delivered', 'delivered', 'delivered']);
      const bad = await request(t.app).get('/v1.0/webhook_deliveries').query({ accesskey: f.accesskey, status: 'bogus' });
      expect(bad.status).to.equal(400);
    } finally {
      await r.close();
    }
  });

  it("call quality: a leg's periodic samples stay off the webhook; its final sample and the alarms are delivered", async () => {
    const r = await receiver(() => 200);
    try {
      const f = await customerWith(r.url);
      const id = newId();
      const q = (extra: Record<string, unknown>) => callPayload(f, { id, call_id: id, codec: 'PCMU', ...extra });
      await publishResourceEvent(publisher, 'call_quality', q({ final: false, in: null, out: null }));
      await publishResourceEvent(publisher, 'call_quality_alarm', q({ direction: 'in', metric: 'jitter_ms', state: 'raised', value: 45, threshold: 30 }));
      await publishResourceEvent(publisher, 'call_quality', q({ final: false, in: null, out: null }));
      await publishResourceEvent(publisher, 'call_quality', q({ final: true, in: null, out: null }));
      await publishResourceEvent(publisher, 'call_hangup', callPayload(f, { id }));
      await until(() => r.got.length >= 3);
      await new Promise((res) => setTimeout(res, 300));
      const got = r.got.map((g) => JSON.parse(g.body) as { event_type: string; topic: string; data: { final?: boolean } });
      expect(got.map((g) => g.event_type)).to.deep.equal(['call_quality_alarm', 'call_quality', 'call_hangup']);
      expect(got[1]!.data.final).to.equal(true);
      expect(got[0]!.topic).to.equal(`customer_id:${f.customer.id}:call:${id}`);
    } finally {
      await r.close();
    }
  });

  it('sends again after a 500, and keeps the next event behind it', async () => {
    const r = await receiver((n) => (n === 1 ? 500 : 200));
    try {
      const f = await customerWith(r.url);
      const first = callPayload(f);
      const second = callPayload(f);
      await publishResourceEvent(publisher, 'call_created', first);
      await publishResourceEvent(publisher, 'call_created', second);
      await until(() => r.got.length >= 3);
      const ids = r.got.map((g) => (JSON.parse(g.body) as { data: { id: string } }).data.id);
      expect(ids).to.deep.equal([first.id, first.id, second.id]);
      // The log row is written after the receiver answered: wait for both rows to settle.
      const repo = webhookDeliveriesRepo(t.ctx.db);
      await until(async () => (await repo.list(f.customer.id, { pageSize: 10, pageToken: '' })).result.every((d) => d.status === 'delivered'));
      const log = await repo.list(f.customer.id, { pageSize: 10, pageToken: '' });
      const byEvent = log.result.sort((a, b) => a.seq - b.seq);
      expect(byEvent.map((d) => [d.status, d.attempts])).to.deep.equal([
        ['delivered', 2],
        ['delivered', 1],
      ]);
    } finally {
      await r.close();
    }
  });

  it('gives up after maxAttempts on a receiver that keeps failing, and does not retry a 4xx', async () => {
    const r = await receiver(() => 503);
    const r4 = await receiver(() => 404);
    try {
      const f = await customerWith(r.url);
      await publishResourceEvent(publisher, 'call_created', callPayload(f));
      const g = await customerWith(r4.url);
      await publishResourceEvent(publisher, 'call_created', callPayload(g));
      const repo = webhookDeliveriesRepo(t.ctx.db);
      await until(async () => (await repo.list(f.customer.id, { pageSize: 1, pageToken: '' })).result[0]?.status === 'failed');
      expect(r.got).to.have.length(3);
      await until(async () => (await repo.list(g.customer.id, { pageSize: 1, pageToken: '' })).result[0]?.status === 'delivered');
      expect(r4.got).to.have.length(1);
    } finally {
      await r.close();
      await r4.close();
    }
  });

  it("also sends to the activeflow's own webhook", async () => {
    const rc = await receiver(() => 200);
    const ra = await receiver(() => 200);
    try {
      const f = await customerWith(rc.url);
      const afId = newId();
      await t.ctx.db('activeflows').insert({
        id: afId,
        customer_id: f.customer.id,
        flow_id: newId(),
        status: 'running',
        reference_id: newId(),
        reference_activeflow_id: EMPTY_UUID,
        on_complete_flow_id: EMPTY_UUID,
        webhook_uri: ra.url,
        webhook_method: 'POST',
        tm_create: new Date(),
      });
      await publishResourceEvent(publisher, 'call_created', callPayload(f, { activeflow_id: afId }));
      await until(() => rc.got.length >= 1 && ra.got.length >= 1);
      expect(ra.got[0]!.body).to.equal(rc.got[0]!.body);
    } finally {
      await rc.close();
      await ra.close();
    }
  });

  it('refuses loopback targets unless allowed', async () => {
    const egress = new EgressPolicy(egressSettingsFromEnv({}));
    const strict = await startWebhooks(t.ctx, { stream: `${stream}-strict`, group: 'strict', queue: 'wh-strict', egress });
    const r = await receiver(() => 200);
    try {
      const f = await customerWith(r.url);
      await strict.handle({ id: newId(), event_type: 'call_created', customer_id: f.customer.id, resource: 'call', resource_id: newId(), timestamp: new Date().toISOString(), data: {} });
      const repo = webhookDeliveriesRepo(t.ctx.db);
      await until(async () => (await repo.list(f.customer.id, { pageSize: 1, pageToken: '' })).result[0]?.status === 'refused');
      expect(r.got).to.have.length(0);
    } finally {
      await strict.close();
      await r.close();
      await t.ctx.redis.del(`${stream}-strict`);
    }
  });

  it('cuts a receiver that does not answer at 5 s', async function () {
    this.timeout(30_000);
    const r = await receiver(() => 'hang');
    const one = await startWebhooks(t.ctx, { stream: `${stream}-hang`, group: 'hang', queue: 'wh-hang', maxAttempts: 1 });
    try {
      const f = await customerWith(r.url);
      const started = Date.now();
      await one.handle({ id: newId(), event_type: 'call_created', customer_id: f.customer.id, resource: 'call', resource_id: newId(), timestamp: new Date().toISOString(), data: {} });
      const repo = webhookDeliveriesRepo(t.ctx.db);
      await until(async () => (await repo.list(f.customer.id, { pageSize: 1, pageToken: '' })).result[0]?.status === 'failed', 15_000);
      const elapsed = Date.now() - started;
      expect(elapsed).to.be.within(4900, 9000);
      const d = (await repo.list(f.customer.id, { pageSize: 1, pageToken: '' })).result[0]!;
      expect(d.error).to.equal('the server could not be reached or did not answer in time');
    } finally {
      await one.close();
      await r.close();
      await t.ctx.redis.del(`${stream}-hang`);
    }
  });
});
