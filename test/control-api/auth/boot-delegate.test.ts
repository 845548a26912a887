import crypto from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { clock } from '../../../core/clock';
import { verifyToken } from '../../../core/credentials';
import { Permission } from '../../../core/permissions';
import { registerDirectResolver, type DirectTarget } from '../../../control-api/auth';
import { createFixture } from '../../../testkit/api';
import { startHarness, expectBare, type Harness } from './harness';

describe('/auth/boot, /auth/boot/refresh, /auth/delegate', () => {
  let h: Harness;
  let unregister: () => void;
  const table = new Map<string, DirectTarget>();
  before(async () => {
    h = await startHarness();
    // Stands for a later resource group (AIs, widgets) that keeps direct hashes: a real resolver over a map.
    unregister = registerDirectResolver({
      resourceTypes: ['ai', 'webchat_widget', 'extension'],
      resolve: async (hash) => table.get(hash) ?? null,
      publicDisplayConfig: async (t) => (t.resource_type === 'webchat_widget' ? { title: 'Hello', color: '#123456' } : null),
    });
  });
  after(async () => {
    unregister();
    await h.close();
  });
  afterEach(() => clock.reset());

  async function directFor(resourceType: string, status: 'active' | 'frozen' = 'active') {
    const f = await createFixture(h.ctx, { status });
    const hash = 'direct.' + crypto.randomBytes(8).toString('hex');
    const target = { resource_type: resourceType, resource_id: crypto.randomUUID(), customer_id: f.customer.id };
    table.set(hash, target);
    return { f, hash, target };
  }

  it('boot: 200 with the spec fields; a 4-hour direct token bound to a fresh allowed_resource_id', async () => {
    const { hash, target } = await directFor('ai');
    const res = await request(h.app).post('/auth/boot').send({ direct_hash: hash });
    expect(res.status).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal(['allowed_resource_id', 'customer_id', 'expire', 'resource_id', 'resource_type', 'scope_version', 'token', 'type']);
    expect(res.body).to.include({ type: 'direct', resource_type: 'ai', resource_id: target.resource_id, customer_id: target.customer_id, scope_version: 1 });
    expect(res.body.allowed_resource_id)
      .to.match(/^[0-9a-f-]{36}$/)
      .and.not.equal(target.resource_id);
    const claims = await verifyToken(h.ctx.config.jwtSecret, res.body.token);
    expect(claims).to.include({ typ: 'direct', allowed_resource_id: res.body.allowed_resource_id });
    expect(claims.exp - claims.iat).to.equal(4 * 3600);
    expect(new Date(res.body.expire).getTime()).to.equal(claims.exp * 1000);
  });

  it('boot: resource_data.public_display_config only for types that have it', async () => {
    const w = await directFor('webchat_widget');
    const res = await request(h.app).post('/auth/boot').send({ direct_hash: w.hash });
    expect(res.body.resource_data).to.deep.equal({ public_display_config: { title: 'Hello', color: '#123456' } });
  });

  it('boot: bare 400 for missing, empty, wrong-prefix, unknown, non-bootable hashes and inactive customers', async () => {
    const ext = await directFor('extension');
    const frozen = await directFor('ai', 'frozen');
    expectBare(await request(h.app).post('/auth/boot').send({}));
    expectBare(await request(h.app).post('/auth/boot').send({ direct_hash: '' }));
    expectBare(await request(h.app).post('/auth/boot').send({ direct_hash: 'direct.' }));
    expectBare(await request(h.app).post('/auth/boot').send({ direct_hash: 'indirect.abc' }));
    expectBare(await request(h.app).post('/auth/boot').send({ direct_hash: 'direct.nothing-here' }));
    expectBare(await request(h.app).post('/auth/boot').send({ direct_hash: 12 }));
    expectBare(await request(h.app).post('/auth/boot').set('Content-Type', 'application/json').send('{"direct_hash"'));
    expectBare(await request(h.app).post('/auth/boot').send({ direct_hash: ext.hash }));
    expectBare(await request(h.app).post('/auth/boot').send({ direct_hash: frozen.hash }));
  });

  it('refresh: same resource and allowed_resource_id, new 4 h; other tokens, stale scope_version, expiry refused', async () => {
    const { hash, f } = await directFor('ai');
    const t0 = Date.now();
    clock.setNow(t0);
    const boot = (await request(h.app).post('/auth/boot').send({ direct_hash: hash })).body;
    clock.setNow(t0 + 3 * 3600_000);
    const ref = await request(h.app).post('/auth/boot/refresh').set('Authorization', `Bearer ${boot.token}`).send({});
    expect(ref.status).to.equal(200);
    expect(ref.body).to.include({ resource_id: boot.resource_id, allowed_resource_id: boot.allowed_resource_id, type: 'direct' });
    expect(new Date(ref.body.expire).getTime()).to.be.greaterThan(new Date(boot.expire).getTime());
    const noBody = await request(h.app).post('/auth/boot/refresh').set('Authorization', `Bearer ${ref.body.token}`);
    expect(noBody.status).to.equal(200);

    expectBare(await request(h.app).post('/auth/boot/refresh').set('Authorization', `Bearer ${f.token}`).send({})); // login token
    expectBare(await request(h.app).post('/auth/boot/refresh').set('Authorization', `Bearer ${ref.body.token}`).send({ resource_id: boot.resource_id }));
    const none = await request(h.app).post('/auth/boot/refresh').send({});
    expect(none.status).to.equal(401);
    expect(none.body.error.reason).to.equal('AUTHENTICATION_REQUIRED');

    clock.setNow(t0 + 3 * 3600_000 + 4 * 3600_000 + 1000); // past the refreshed token
    const late = await request(h.app).post('/auth/boot/refresh').set('Authorization', `Bearer ${ref.body.token}`).send({});
    expect(late.status).to.equal(401);

    clock.setNow(t0);
    h.scopeVersion.value = 2; // raising the scope version invalidates every outstanding direct token
    try {
      const stale = await request(h.app).post('/auth/boot/refresh').set('Authorization', `Bearer ${boot.token}`).send({});
      expect(stale.status).to.equal(401);
      const again = await request(h.app).post('/auth/boot').send({ direct_hash: hash });
      expect(again.body.scope_version).to.equal(2);
    } finally {
      h.scopeVersion.value = 1;
    }
  });

  it('delegate: a ProjectSuperAdmin gets a 30-minute token that acts as admin of the target customer', async () => {
    const sup = await createFixture(h.ctx, { permission: Permission.ProjectSuperAdmin | Permission.CustomerAdmin });
    const target = await createFixture(h.ctx);
    const res = await request(h.app).post('/auth/delegate').set('Authorization', `Bearer ${sup.token}`).send({ customer_id: target.customer.id, reason: 'ticket 4711: webhook broken' });
    expect(res.status).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal(['customer_id', 'expire', 'token']);
    expect(res.body.customer_id).to.equal(target.customer.id);
    const claims = await verifyToken(h.ctx.config.jwtSecret, res.body.token);
    expect(claims).to.include({ typ: 'delegate', customer_id: target.customer.id, sub: sup.admin.id });
    expect(claims.exp - claims.iat).to.equal(30 * 60);
    const cust = await request(h.app).get('/v1.0/customer').set('Authorization', `Bearer ${res.body.token}`);
    expect(cust.status).to.equal(200);
    expect(cust.body.id).to.equal(target.customer.id);
    // no delegation from a delegate token
    expectBare(await request(h.app).post('/auth/delegate').set('Authorization', `Bearer ${res.body.token}`).send({ customer_id: target.customer.id, reason: 'chained delegation' }), 403);
  });

  it('delegate: bare 403 for non-super-admins and access keys, 404 unknown customer, 422/400 bad input; envelope without credentials', async () => {
    const sup = await createFixture(h.ctx, { permission: Permission.ProjectSuperAdmin | Permission.CustomerAdmin });
    const plain = await createFixture(h.ctx);
    const target = await createFixture(h.ctx);
    const body = { customer_id: target.customer.id, reason: 'ticket 4711: webhook broken' };
    expectBare(await request(h.app).post('/auth/delegate').set('Authorization', `Bearer ${plain.token}`).send(body), 403);
    expectBare(
      await request(h.app)
        .post(`/auth/delegate?accesskey=${encodeURIComponent(sup.accesskey)}`)
        .send(body),
      403,
    );
    const auth = { Authorization: `Bearer ${sup.token}` };
    expectBare(
      await request(h.app)
        .post('/auth/delegate')
        .set(auth)
        .send({ ...body, customer_id: crypto.randomUUID() }),
      404,
    );
    expectBare(
      await request(h.app)
        .post('/auth/delegate')
        .set(auth)
        .send({ ...body, customer_id: 'not-a-uuid' }),
      422,
    );
    expectBare(
      await request(h.app)
        .post('/auth/delegate')
        .set(auth)
        .send({ ...body, reason: 'short' }),
      422,
    );
    expectBare(await request(h.app).post('/auth/delegate').set(auth).send({ customer_id: target.customer.id }), 400);
    expectBare(
      await request(h.app)
        .post('/auth/delegate')
        .set(auth)
        .send({ ...body, extra: true }),
      400,
    );
    expectBare(await request(h.app).post('/auth/delegate').set(auth).set('Content-Type', 'application/json').send('{'), 400);
    const none = await request(h.app).post('/auth/delegate').send(body);
    expect(none.status).to.equal(401);
    expect(none.body.error.reason).to.equal('AUTHENTICATION_REQUIRED');
  });
});
