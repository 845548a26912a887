import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createAgent, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { Permission } from '../../core/permissions';

describe('control-api: permissions and cross-customer isolation', () => {
  let t: TestApp;
  let a: Fixture;
  let b: Fixture;
  before(async () => {
    t = await buildTestApp();
  });
  beforeEach(async () => {
    await truncateAll();
    a = await createFixture(t.ctx);
    b = await createFixture(t.ctx);
  });
  after(async () => t.close());

  it('agent level: may read /customer and /me, not admin endpoints (403 PERMISSION_DENIED)', async () => {
    const { token, agent } = await createAgent(t.ctx, a.customer.id, Permission.CustomerAgent);
    expect((await request(t.app).get('/v1.0/customer').query({ token })).status).to.equal(200);
    const me = await request(t.app).get('/v1.0/me').query({ token });
    expect(me.status).to.equal(200);
    expect(me.body.id).to.equal(agent.id);
    expect(me.body).to.not.have.property('password_hash');
    expect(me.body.permission).to.equal(Permission.CustomerAgent);
    for (const [method, path] of [
      ['get', '/v1.0/accesskeys'],
      ['post', '/v1.0/accesskeys'],
      ['put', '/v1.0/customer'],
      ['get', '/v1.0/outbound_configs'],
    ] as const) {
      const res = await request(t.app)[method](path).query({ token }).send({});
      expect(res.status, `${method} ${path}`).to.equal(403);
      expect(res.body.error.reason).to.equal('PERMISSION_DENIED');
    }
  });

  it('manager level is below admin; admin passes; an agent without any level is refused', async () => {
    const manager = await createAgent(t.ctx, a.customer.id, Permission.CustomerManager);
    expect((await request(t.app).get('/v1.0/customer').query({ token: manager.token })).status).to.equal(200);
    expect((await request(t.app).get('/v1.0/accesskeys').query({ token: manager.token })).status).to.equal(403);
    expect((await request(t.app).get('/v1.0/accesskeys').query({ token: a.token })).status).to.equal(200);
    const none = await createAgent(t.ctx, a.customer.id, Permission.None);
    expect((await request(t.app).get('/v1.0/customer').query({ token: none.token })).status).to.equal(403);
  });

  it("another customer's resources answer 404, and are left untouched", async () => {
    const key = b.accesskeyRow.id;
    const oc = b.outboundConfig.id;
    for (const [method, path, body] of [
      ['get', `/v1.0/accesskeys/${key}`, undefined],
      ['put', `/v1.0/accesskeys/${key}`, { name: 'stolen' }],
      ['delete', `/v1.0/accesskeys/${key}`, undefined],
      ['get', `/v1.0/outbound_configs/${oc}`, undefined],
      ['put', `/v1.0/outbound_configs/${oc}`, { name: 'stolen' }],
      ['delete', `/v1.0/outbound_configs/${oc}`, undefined],
    ] as const) {
      const res = await request(t.app)[method](path).query({ accesskey: a.accesskey }).send(body);
      expect(res.status, `${method} ${path}`).to.equal(404);
      expect(res.body.error.reason).to.equal('RESOURCE_NOT_FOUND');
    }
    const still = await request(t.app).get(`/v1.0/accesskeys/${key}`).query({ accesskey: b.accesskey });
    expect(still.status).to.equal(200);
    expect(still.body.name).to.equal('fixture');
    expect((await request(t.app).get('/v1.0/customer').query({ accesskey: b.accesskey })).status).to.equal(200);
    const lists = await request(t.app).get('/v1.0/accesskeys').query({ accesskey: a.accesskey });
    expect(lists.body.result.map((k: { id: string }) => k.id)).to.deep.equal([a.accesskeyRow.id]);
  });

  it('/me with an accesskey → 403 DIRECT_ACCESS_NOT_SUPPORTED', async () => {
    const res = await request(t.app).get('/v1.0/me').query({ accesskey: a.accesskey });
    expect(res.status).to.equal(403);
    expect(res.body.error.reason).to.equal('DIRECT_ACCESS_NOT_SUPPORTED');
  });
});
