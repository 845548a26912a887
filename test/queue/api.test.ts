// /agents, /queues and /queuecalls over HTTP against the real test Postgres and Redis: CRUD, the
// permission levels, the spec error envelope for bad input, and the events published.
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createAgent, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { Permission } from '../../core/permissions';
import { newId } from '../../core/ids';
import { queuecallsRepo } from '../../core/repos/queuecalls';
import { queuesRepo } from '../../core/repos/queues';
import { eventStreamKey } from '../../core/events/bus';

describe('queue: /agents, /queues, /queuecalls', function () {
  this.timeout(30_000);
  let t: TestApp;
  let f: Fixture;

  const as = (token: string) => ({
    get: (p: string) => request(t.app).get(p).set('Authorization', `Bearer ${token}`),
    post: (p: string, b?: object) => request(t.app).post(p).set('Authorization', `Bearer ${token}`).send(b),
    put: (p: string, b?: object) => request(t.app).put(p).set('Authorization', `Bearer ${token}`).send(b),
    del: (p: string) => request(t.app).delete(p).set('Authorization', `Bearer ${token}`),
  });
  const admin = () => as(f.token);
  const tagId = async (name: string) => (await admin().post('/v1.0/tags', { name })).body.id as string;
  const eventsOf = async (id: string) => {
    const entries = (await t.ctx.redis.xrange(eventStreamKey(t.ctx.config.redisKeyPrefix), '-', '+')) as [string, string[]][];
    return entries
      .map(([, fl]) => JSON.parse(fl[fl.indexOf('e') + 1]!))
      .filter((e) => e.resource_id === id)
      .map((e) => e.event_type as string);
  };

  before(async () => {
    t = await buildTestApp({ env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RATE_LIMIT_SCALE: '0' } });
  });
  after(async () => t.close());
  beforeEach(async () => {
    await truncateAll();
    f = await createFixture(t.ctx);
  });

  describe('agents', () => {
    it('creates, reads, lists with filters, updates, deletes; publishes agent events', async () => {
      const sales = await tagId('sales');
      const r = await admin().post('/v1.0/agents', {
        username: 'alice@example.test',
        password: 'secret-123',
        name: 'Alice',
        ring_method: 'linear',
        permission: 16,
        tag_ids: [sales],
        addresses: [
          { type: 'extension', target: '2001' },
          { type: 'tel', target: '+15551230001' },
          { type: 'sip', target: 'alice@10.0.0.1:5070' },
        ],
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      expect(r.body).to.include({ username: 'alice@example.test', name: 'Alice', ring_method: 'linear', status: 'offline', permission: 16 });
      expect(r.body.tag_ids).to.deep.equal([sales]);
      expect(r.body.addresses).to.have.length(3);
      expect(r.body).to.not.have.property('password_hash');
      const id = r.body.id as string;

      // the new agent can log in
      const login = await request(t.app).post('/auth/login').send({ username: 'alice@example.test', password: 'secret-123' });
      expect(login.status).to.equal(200);

      expect((await admin().get(`/v1.0/agents/${id}`)).body.name).to.equal('Alice');
      const byTag = await admin().get(`/v1.0/agents?tag_ids=${sales}`);
      expect(byTag.body.result.map((a: { id: string }) => a.id)).to.deep.equal([id]);
      expect((await admin().get('/v1.0/agents?status=available')).body.result).to.have.length(0);

      const st = await admin().put(`/v1.0/agents/${id}/status`, { status: 'available' });
      expect(st.status).to.equal(200);
      expect(st.body.status).to.equal('available');
      expect((await admin().get('/v1.0/agents?status=available')).body.result.map((a: { id: string }) => a.id)).to.deep.equal([id]);

      const up = await admin().put(`/v1.0/agents/${id}`, { name: 'Alice B', ring_method: 'ringall' });
      expect(up.body).to.include({ name: 'Alice B', ring_method: 'ringall' });
      expect((await admin().put(`/v1.0/agents/${id}/addresses`, { addresses: [{ type: 'sip', target: 'a@b.c' }] })).body.addresses).to.deep.equal([{ type: 'sip', target: 'a@b.c' }]);
      expect((await admin().put(`/v1.0/agents/${id}/tag_ids`, { tag_ids: [] })).body.tag_ids).to.deep.equal([]);
      expect((await admin().put(`/v1.0/agents/${id}/permission`, { permission: 64 })).body.permission).to.equal(64);
      const dh = (await admin().post(`/v1.0/agents/${id}/direct-hash-regenerate`)).body.direct_hash;
      expect(dh).to.be.a('string').with.length.greaterThan(0);

      const del = await admin().del(`/v1.0/agents/${id}`);
      expect(del.status).to.equal(200);
      expect(del.body.tm_delete).to.not.match(/^9999/);
      expect((await admin().get(`/v1.0/agents/${id}`)).status).to.equal(404);
      expect(await eventsOf(id)).to.deep.equal(['agent_created', 'agent_status_updated', 'agent_updated', 'agent_updated', 'agent_updated', 'agent_updated', 'agent_updated', 'agent_deleted']);
    });

    it('refuses bad input with the error envelope', async () => {
      const bad = async (body: object, field: string) => {
        const r = await admin().post('/v1.0/agents', { username: `u${newId()}@x.test`, password: 'secret-123', ...body });
        expect(r.status, JSON.stringify(body)).to.equal(400);
        expect(r.body.error.reason).to.equal('INVALID_ARGUMENT');
        expect(JSON.stringify(r.body.error.details ?? r.body.error.message)).to.contain(field);
      };
      await bad({ tag_ids: [newId()] }, 'tag_ids');
      await bad({ tag_ids: ['nope'] }, 'tag_ids');
      await bad({ ring_method: 'roundrobin' }, 'ring_method');
      await bad({ permission: 7 }, 'permission');
      await bad({ addresses: [{ type: 'email', target: 'a@b.c' }] }, 'addresses.0.type');
      await bad({ addresses: [{ type: 'tel', target: '555' }] }, 'addresses.0.target');
      await bad({ password: 'short' }, 'password');
      await bad({ extra: 1 }, 'extra');
      // another customer's tag is unknown here
      const other = await createFixture(t.ctx);
      const foreign = (await as(other.token).post('/v1.0/tags', { name: 'theirs' })).body.id;
      await bad({ tag_ids: [foreign] }, 'tag_ids');

      const dup = await admin().post('/v1.0/agents', { username: f.admin.username.toUpperCase(), password: 'secret-123' });
      expect(dup.status).to.equal(409);
      expect((await admin().get(`/v1.0/agents/${newId()}`)).status).to.equal(404);
      expect((await admin().get('/v1.0/agents/not-a-uuid')).body.error.reason).to.equal('INVALID_ID');
      expect((await as(other.token).get(`/v1.0/agents/${f.admin.id}`)).status).to.equal(404);
      // ringing is the queue's to set
      expect((await admin().put(`/v1.0/agents/${f.admin.id}/status`, { status: 'ringing' })).status).to.equal(400);
      expect((await admin().get('/v1.0/agents?tag_ids=zzz')).status).to.equal(400);
      // only a super admin grants ProjectSuperAdmin
      expect((await admin().put(`/v1.0/agents/${f.admin.id}/permission`, { permission: 1 })).status).to.equal(403);
    });

    it('permission levels: an agent sets its own status only; managers cannot create agents', async () => {
      const ag = await createAgent(t.ctx, f.customer.id, Permission.CustomerAgent);
      const mgr = await createAgent(t.ctx, f.customer.id, Permission.CustomerManager);
      expect((await as(ag.token).put(`/v1.0/agents/${ag.agent.id}/status`, { status: 'available' })).status).to.equal(200);
      expect((await as(ag.token).put(`/v1.0/agents/${mgr.agent.id}/status`, { status: 'away' })).status).to.equal(403);
      expect((await as(mgr.token).put(`/v1.0/agents/${ag.agent.id}/status`, { status: 'away' })).body.status).to.equal('away');
      expect((await as(ag.token).put(`/v1.0/agents/${ag.agent.id}`, { name: 'x' })).status).to.equal(403);
      expect((await as(mgr.token).post('/v1.0/agents', { username: 'm@x.test', password: 'secret-123' })).status).to.equal(403);
      expect((await as(ag.token).get('/v1.0/agents')).status).to.equal(200);
    });
  });

  describe('queues', () => {
    it('creates with defaults, updates, sub-resources, deletes', async () => {
      const sales = await tagId('sales');
      const flow = await admin().post('/v1.0/flows', { name: 'hold', actions: [{ type: 'talk', option: { text: 'please hold', language: 'en-US' } }] });
      expect(flow.status, JSON.stringify(flow.body)).to.equal(200);
      const r = await admin().post('/v1.0/queues', { name: 'Sales', tag_ids: [sales], wait_flow_id: flow.body.id, wait_timeout: 60000, service_timeout: 0 });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body).to.include({ name: 'Sales', routing_method: 'random', wait_flow_id: flow.body.id, wait_timeout: 60000, service_timeout: 0, total_incoming_count: 0 });
      expect(r.body.tag_ids).to.deep.equal([sales]);
      expect(r.body.wait_queuecall_ids).to.deep.equal([]);
      const id = r.body.id;
      expect((await admin().get('/v1.0/queues')).body.result.map((q: { id: string }) => q.id)).to.deep.equal([id]);
      expect((await admin().put(`/v1.0/queues/${id}`, { name: 'S2', wait_flow_id: '' })).body).to.include({ name: 'S2', wait_flow_id: '00000000-0000-0000-0000-000000000000' });
      expect((await admin().put(`/v1.0/queues/${id}/routing_method`, { routing_method: 'random' })).status).to.equal(200);
      expect((await admin().put(`/v1.0/queues/${id}/tag_ids`, { tag_ids: [] })).body.tag_ids).to.deep.equal([]);
      expect((await admin().post(`/v1.0/queues/${id}/direct-hash-regenerate`)).body.direct_hash)
        .to.be.a('string')
        .with.length.greaterThan(0);
      expect((await admin().del(`/v1.0/queues/${id}`)).status).to.equal(200);
      expect((await admin().get(`/v1.0/queues/${id}`)).status).to.equal(404);
    });

    it('refuses unknown tags and flows, bad routing methods and timeouts; 404s', async () => {
      const bad = async (body: object, field: string) => {
        const r = await admin().post('/v1.0/queues', { name: 'q', ...body });
        expect(r.status, JSON.stringify(body)).to.equal(400);
        expect(r.body.error.reason).to.equal('INVALID_ARGUMENT');
        expect(JSON.stringify(r.body.error)).to.contain(field);
      };
      await bad({ tag_ids: [newId()] }, 'tag_ids');
      await bad({ routing_method: 'roundrobin' }, 'routing_method');
      await bad({ wait_flow_id: newId() }, 'wait_flow_id');
      await bad({ wait_timeout: -1 }, 'wait_timeout');
      await bad({ service_timeout: 1.5 }, 'service_timeout');
      await bad({ wait_actions: [] }, 'wait_actions');
      expect((await admin().get(`/v1.0/queues/${newId()}`)).status).to.equal(404);
      expect((await admin().put(`/v1.0/queues/${newId()}/tag_ids`, { tag_ids: [] })).status).to.equal(404);
      expect((await admin().put(`/v1.0/queues/${newId()}/routing_method`, {})).status).to.equal(400);
      const ag = await createAgent(t.ctx, f.customer.id, Permission.CustomerAgent);
      expect((await as(ag.token).post('/v1.0/queues', { name: 'x' })).status).to.equal(403);
    });
  });

  describe('queuecalls', () => {
    it('lists and gets; kicking a queuecall no live node holds closes it; delete; 404 and 409', async () => {
      const q = await queuesRepo(t.ctx.db).create(f.customer.id, { name: 'q' });
      const qc = await queuecallsRepo(t.ctx.db).create({ customer_id: f.customer.id, queue_id: q.id, reference_id: newId() });
      await queuecallsRepo(t.ctx.db).transition(qc.id, 'waiting');
      const list = await admin().get(`/v1.0/queuecalls?queue_id=${q.id}`);
      expect(list.body.result.map((x: { id: string }) => x.id)).to.deep.equal([qc.id]);
      expect((await admin().get(`/v1.0/queues/${q.id}`)).body.wait_queuecall_ids).to.deep.equal([qc.id]);
      expect((await admin().get(`/v1.0/queuecalls/${qc.id}`)).body.status).to.equal('waiting');
      const k = await admin().post(`/v1.0/queuecalls/${qc.id}/kick`);
      expect(k.status).to.equal(200);
      expect(k.body.status).to.equal('abandoned');
      expect((await admin().post(`/v1.0/queuecalls/${qc.id}/kick`)).status).to.equal(409);
      expect((await admin().post(`/v1.0/queuecalls/reference_id/${qc.reference_id}/kick`)).status).to.equal(404);
      const d = await admin().del(`/v1.0/queuecalls/${qc.id}`);
      expect(d.status).to.equal(200);
      expect((await admin().get(`/v1.0/queuecalls/${qc.id}`)).status).to.equal(404);
      expect(await eventsOf(qc.id)).to.deep.equal(['queuecall_abandoned', 'queuecall_deleted']);
      expect((await admin().get(`/v1.0/queuecalls/${newId()}`)).status).to.equal(404);
      expect((await admin().get('/v1.0/queuecalls?status=lost')).status).to.equal(400);
    });
  });
});
