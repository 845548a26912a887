/**
 * Customer and activeflow webhooks against the shared spellings of "this machine": a literal
 * internal address is refused when the URI is set (PUT /customer, POST /activeflows: 400 naming
 * webhook_uri; signup: the bare 400), and every spelling that gets past validation (names,
 * redirects, rebinding) is refused at delivery (status refused, a message naming no address) or,
 * for redirects and rebinding, lands on the allowed server only. The internal server never sees a
 * request.
 */
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { startWebhooks, type WebhookService } from '../../control-api/webhooks';
import { webhookDeliveriesRepo } from '../../core/repos/webhook-deliveries';
import { newId } from '../../core/ids';
import { until } from '../../testkit/media-app/harness';
import { closeCommandBus } from '../../control-api/calls/bus';
import { startInternalTargets, SPELLINGS, DNS_NAMES, type InternalTargets } from './spellings';

describe('security: webhooks cannot reach internal addresses', function () {
  this.timeout(60_000);
  let targets: InternalTargets;
  let t: TestApp;
  let f: Fixture;

  before(async () => {
    targets = await startInternalTargets();
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', ...targets.env } });
    f = await createFixture(t.ctx);
  });
  after(async () => {
    await closeCommandBus(t.ctx).catch(() => undefined);
    await t?.close();
    await targets?.close();
  });
  afterEach(() => expect(targets.internalHits(), 'the internal server was reached').to.equal(0));

  describe('at validation', () => {
    for (const s of SPELLINGS.filter((x) => x.kind === 'literal')) {
      it(`PUT /customer refuses ${s.label} with 400 naming webhook_uri`, async () => {
        const r = await request(t.app)
          .put('/v1.0/customer')
          .set('Authorization', `Bearer ${f.token}`)
          .send({ webhook_method: 'POST', webhook_uri: s.url(targets) });
        expect(r.status, JSON.stringify(r.body)).to.equal(400);
        expect(r.body.error.reason).to.equal('INVALID_ARGUMENT');
        expect(r.body.error.details).to.deep.equal([{ field: 'webhook_uri', issue: r.body.error.message.replace(/^webhook_uri: /, '') }]);
        expect(r.body.error.message).to.match(/^webhook_uri: the URL's host is an? [a-z-]+ address, which is not allowed$/);
      });
    }

    it('POST /activeflows refuses a loopback webhook_uri with 400 naming it', async () => {
      const r = await request(t.app)
        .post('/v1.0/activeflows')
        .set('Authorization', `Bearer ${f.token}`)
        .send({ actions: [{ type: 'variable_set', option: { key: 'a', value: '1' } }], webhook_uri: `http://[::ffff:7f00:1]:${targets.port}/`, webhook_method: 'POST' });
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body.error.details[0].field).to.equal('webhook_uri');
      expect(r.body.error.message).to.equal("webhook_uri: the URL's host is a loopback address, which is not allowed");
    });

    it('signup refuses a loopback webhook_uri (the bare 400 of the auth group)', async () => {
      const r = await request(t.app)
        .post('/auth/signup')
        .send({ email: `s${newId()}@example.test`, accepted_tos: true, webhook_uri: `http://0x7f000001:${targets.port}/` });
      expect(r.status).to.equal(400);
    });

    it('an allowed URI is accepted', async () => {
      const r = await request(t.app)
        .put('/v1.0/customer')
        .set('Authorization', `Bearer ${f.token}`)
        .send({ webhook_method: 'POST', webhook_uri: `${targets.allowedUrl}/hook` });
      expect(r.status).to.equal(200);
    });
  });

  describe('at delivery', () => {
    let hooks: WebhookService;
    before(async () => {
      hooks = await startWebhooks(t.ctx, { stream: `sec-wh-${newId()}`, queue: `sec-wh-${newId()}`, group: `sec-wh-${newId()}`, maxAttempts: 1, baseDelayMs: 50 });
    });
    after(() => hooks?.close());

    /** Sends one event to a customer whose webhook_uri is `uri` (written past validation) and returns the finished delivery. */
    async function deliver(uri: string) {
      const c = await createFixture(t.ctx);
      await t.ctx.db('customers').where({ id: c.customer.id }).update({ webhook_uri: uri, webhook_method: 'POST' });
      await hooks.handle({ id: newId(), event_type: 'call_created', customer_id: c.customer.id, resource: 'call', resource_id: newId(), timestamp: new Date().toISOString(), data: {} });
      const repo = webhookDeliveriesRepo(t.ctx.db);
      return until(
        async () => {
          const d = (await repo.list(c.customer.id, { pageSize: 1, pageToken: '' })).result[0];
          return d && d.status !== 'pending' ? d : null;
        },
        15_000,
        'delivery finished',
      );
    }

    for (const s of SPELLINGS) {
      it(`${s.kind}: ${s.label}`, async () => {
        targets.resetRebind();
        const d = await deliver(s.url(targets));
        expect(JSON.stringify(d)).to.not.include(targets.secret);
        if (s.kind === 'redirect') {
          // not followed: the allowed server's 302 is the answer
          expect(d).to.include({ status: 'delivered', response_status: 302 });
        } else if (s.kind === 'rebind') {
          expect(d.status, d.error).to.equal('delivered');
        } else {
          expect(d.status).to.equal('refused');
          expect(d.error).to.match(/^webhook_uri: /);
          if (s.kind === 'name') expect(d.error).to.equal('webhook_uri: the destination host name resolves to an address that is not allowed');
        }
      });
    }

    it("an activeflow's own webhook on a name that resolves to loopback is refused at delivery", async () => {
      const af = await request(t.app)
        .post('/v1.0/activeflows')
        .set('Authorization', `Bearer ${f.token}`)
        .send({ actions: [{ type: 'variable_set', option: { key: 'a', value: '1' } }], webhook_uri: `http://${DNS_NAMES.loop6}:${targets.port}/af`, webhook_method: 'POST' });
      expect(af.status, JSON.stringify(af.body)).to.equal(201);
      await t.ctx.db('customers').where({ id: f.customer.id }).update({ webhook_uri: '' });
      await hooks.handle({
        id: newId(),
        event_type: 'activeflow_updated',
        customer_id: f.customer.id,
        resource: 'activeflow',
        resource_id: af.body.id,
        timestamp: new Date().toISOString(),
        data: { id: af.body.id },
      });
      const repo = webhookDeliveriesRepo(t.ctx.db);
      const d = await until(
        async () => {
          const x = (await repo.list(f.customer.id, { pageSize: 10, pageToken: '' })).result.find((r) => r.target === 'activeflow');
          return x && x.status !== 'pending' ? x : null;
        },
        15_000,
        'activeflow delivery finished',
      );
      expect(d.status).to.equal('refused');
      expect(d.error).to.equal('webhook_uri: the destination host name resolves to an address that is not allowed');
    });
  });
});
