import { expect } from 'chai';
import type { TestApp, Fixture } from '../../../testkit/api';
import { createAgent, createFixture } from '../../../testkit/api';
import { Permission } from '../../../core/permissions';
import { api, BusQueues, freshFixture, request, startApp, stopApp } from './support';
import { activeflowNodeKey } from '../../../core/commands/bus';
import { ORIGINATE_QUEUE, nodeAliveKey, nodeQueueName } from '../../../core/commands/contracts';
import { PgActiveflowStore, type ActiveflowRecordShape } from '../../../core/repos/activeflows';
import { PgFlowStore } from '../../../core/repos/flows';
import { EMPTY_UUID } from '../../../core/ids';
import { storedActiveflowRow } from '../../../core/flow/stored-activeflow';

const NODE = `af${process.pid}`;

describe('activeflows', function () {
  let t: TestApp;
  let f: Fixture;
  let bus: BusQueues;

  before(async () => {
    t = await startApp();
    bus = await BusQueues.open(t, [ORIGINATE_QUEUE, nodeQueueName(NODE)]);
  });
  after(async () => {
    await bus?.close();
    await stopApp(t);
  });
  beforeEach(async () => {
    bus.clear();
    f = await freshFixture(t);
  });

  it('POST from actions: 201 running record, activeflow.start on the shared queue', async () => {
    const r = await api(t, f).post('/activeflows', { actions: [{ type: 'variable_set', option: { key: 'a', value: 'b' } }], variables: { x: '1', 'svc.y': 'no' } });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(r.body).to.include({ status: 'running', reference_type: 'api', reference_id: EMPTY_UUID, customer_id: f.customer.id });
    expect(r.body.variables).to.deep.equal({ x: '1' });
    expect(r.body.executed_actions).to.deep.equal([]);
    const flow = await t.ctx.db('flows').where({ id: r.body.flow_id }).first();
    expect(flow!.persist).to.equal(false);
    const jobs = await bus.waitFor(ORIGINATE_QUEUE, 1);
    expect(jobs[0]!.command).to.deep.equal({ type: 'activeflow.start', activeflowId: r.body.id, customerId: f.customer.id });
    const g = await api(t, f).get(`/activeflows/${r.body.id}`);
    expect(g.body).to.deep.equal(r.body);
    expect((await api(t, f).get('/activeflows')).body.result.map((a: { id: string }) => a.id)).to.deep.equal([r.body.id]);
  });

  it('POST from flow_id with a client id; errors: no flow, missing flow, bad actions, duplicate id, bad variables', async () => {
    const flow = await api(t, f).post('/flows', { actions: [{ type: 'answer' }] });
    const id = '88888888-8888-4888-8888-888888888888';
    const r = await api(t, f).post('/activeflows', { id, flow_id: flow.body.id });
    expect(r.status).to.equal(201);
    expect(r.body).to.include({ id, flow_id: flow.body.id });
    expect((await api(t, f).post('/activeflows', { id, flow_id: flow.body.id })).body.error.reason).to.equal('ALREADY_EXISTS');
    expect((await api(t, f).post('/activeflows', {})).status).to.equal(400);
    const missing = await api(t, f).post('/activeflows', { flow_id: '99999999-9999-4999-8999-999999999999' });
    expect(missing.status).to.equal(404);
    expect(missing.body.error.reason).to.equal('FLOW_NOT_FOUND');
    const bad = await api(t, f).post('/activeflows', { actions: [{ type: 'goto' }] });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.details[0].field).to.match(/^actions\[0\]\.option/);
    expect((await api(t, f).post('/activeflows', { actions: [], variables: { a: 1 } })).status).to.equal(400);
    expect((await api(t, f).post('/activeflows', { actions: [], webhook_uri: 'ftp://x' })).status).to.equal(400);
    const other = await createFixture(t.ctx);
    expect((await api(t, other).get(`/activeflows/${id}`)).body.error.reason).to.equal('ACTIVEFLOW_NOT_FOUND');
  });

  it('stop: idempotent; running with a live node → activeflow.stop to that node; without one → ended here', async () => {
    const a = await api(t, f).post('/activeflows', { actions: [{ type: 'block' }] });
    // A node runs it.
    const pfx = t.ctx.config.redisKeyPrefix;
    await t.ctx.redis.set(pfx + activeflowNodeKey(a.body.id), NODE);
    await t.ctx.redis.set(pfx + nodeAliveKey(NODE), '1', 'PX', 60_000);
    const s = await api(t, f).post(`/activeflows/${a.body.id}/stop`);
    expect(s.status).to.equal(200);
    const jobs = await bus.waitFor(nodeQueueName(NODE), 1);
    expect(jobs[0]!.command).to.deep.equal({ type: 'activeflow.stop', activeflowId: a.body.id });
    // The node goes away before ending it: the next stop ends the record here.
    await t.ctx.redis.del(pfx + nodeAliveKey(NODE));
    const s2 = await api(t, f).post(`/activeflows/${a.body.id}/stop`);
    expect(s2.status).to.equal(200);
    expect(s2.body).to.include({ status: 'ended', end_reason: 'stopped' });
    const s3 = await api(t, f).post(`/activeflows/${a.body.id}/stop`);
    expect(s3.status).to.equal(200);
    expect(s3.body).to.deep.equal(s2.body);
    expect((await api(t, f).post('/activeflows/99999999-9999-4999-8999-999999999999/stop')).body.error.reason).to.equal('ACTIVEFLOW_NOT_FOUND');
  });

  it("DELETE: stops a running one (through its node, or here), then 204 and gone; the runner's later write does not bring it back", async () => {
    const a = await api(t, f).post('/activeflows', { actions: [{ type: 'block' }] });
    const pfx = t.ctx.config.redisKeyPrefix;
    await t.ctx.redis.set(pfx + activeflowNodeKey(a.body.id), NODE);
    await t.ctx.redis.set(pfx + nodeAliveKey(NODE), '1', 'PX', 60_000);
    const d = await api(t, f).del(`/activeflows/${a.body.id}`);
    expect([d.status, d.text]).to.deep.equal([204, '']);
    const jobs = await bus.waitFor(nodeQueueName(NODE), 1);
    expect(jobs[0]!.command).to.deep.equal({ type: 'activeflow.stop', activeflowId: a.body.id });
    expect((await api(t, f).get(`/activeflows/${a.body.id}`)).body.error.reason).to.equal('ACTIVEFLOW_NOT_FOUND');
    // The node ends the run afterwards and writes its record (tm_delete null in its copy).
    const store = new PgActiveflowStore(t.ctx.db);
    const rec = (await store.get(a.body.id))!;
    await store.update({ ...rec, status: 'ended', end_reason: 'stopped', tm_delete: null });
    expect((await api(t, f).get(`/activeflows/${a.body.id}`)).status, 'still deleted').to.equal(404);
    expect((await api(t, f).get('/activeflows')).body.result).to.deep.equal([]);
    expect((await api(t, f).del(`/activeflows/${a.body.id}`)).body.error.reason).to.equal('ACTIVEFLOW_NOT_FOUND');
    await t.ctx.redis.del(pfx + nodeAliveKey(NODE));

    // No live node runs it: ended here, then deleted.
    const b = await api(t, f).post('/activeflows', { actions: [{ type: 'block' }] });
    expect((await api(t, f).del(`/activeflows/${b.body.id}`)).status).to.equal(204);
    const row = await t.ctx.db('activeflows').where({ id: b.body.id }).first();
    expect(row).to.include({ status: 'ended', end_reason: 'stopped' });
    expect(row!.tm_delete).to.be.instanceOf(Date);

    const c = await api(t, f).post('/activeflows', { actions: [{ type: 'block' }] });
    const other = await createFixture(t.ctx);
    expect((await api(t, other).del(`/activeflows/${c.body.id}`)).body.error.reason).to.equal('ACTIVEFLOW_NOT_FOUND');
    expect((await api(t, f).del('/activeflows/nope')).body.error.reason).to.equal('INVALID_ID');
    const agent = await createAgent(t.ctx, f.customer.id, Permission.CustomerAgent);
    const denied = await request(t.app).delete(`/v1.0/activeflows/${c.body.id}`).set('Authorization', `Bearer ${agent.token}`);
    expect([denied.status, denied.body.error.reason]).to.deep.equal([403, 'PERMISSION_DENIED']);
    expect((await api(t, f).get(`/activeflows/${c.body.id}`)).body.status).to.equal('running');
  });

  it('PgActiveflowStore: create/update/get/list, executed actions appended in order from a shared array', async () => {
    const store = new PgActiveflowStore(t.ctx.db);
    const now = () => new Date().toISOString().slice(0, 23) + '000Z';
    const rec: ActiveflowRecordShape = storedActiveflowRow(
      '12345678-1234-4234-8234-123456789012',
      { customerId: f.customer.id, flowId: EMPTY_UUID, onCompleteFlowId: EMPTY_UUID, referenceType: 'call', referenceId: EMPTY_UUID, variables: {} },
      now(),
    );
    await store.create(rec);
    const shared = rec.executed_actions;
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 30; i++) {
      const action = { id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, next_id: EMPTY_UUID, type: 'sleep' as const, option: { duration: i }, tm_execute: now() };
      shared.push(action);
      // Same array object, as the runner hands it over; the store must copy what it sees now.
      writes.push(store.update({ ...rec, executed_actions: shared, current_action: action, variables: { i: String(i) } }));
    }
    shared.push({ id: 'late', next_id: EMPTY_UUID, type: 'stop', option: {}, tm_execute: now() });
    shared.pop();
    await Promise.all(writes);
    await store.update({ ...rec, executed_actions: shared, status: 'ended', end_reason: 'finished', current_action: null, variables: { i: '29' } });
    const got = await store.get(rec.id);
    expect(got!.executed_actions.map((a) => a.option.duration)).to.deep.equal([...Array(30).keys()]);
    expect(got!).to.include({ status: 'ended', end_reason: 'finished' });
    expect(got!.variables).to.deep.equal({ i: '29' });
    expect(got!.tm_create).to.match(/Z$/);
    const list = await store.list({ customer_id: f.customer.id, limit: 10 });
    expect(list.map((r) => r.id)).to.deep.equal([rec.id]);
    expect(await store.list({ customer_id: f.customer.id, limit: 10, before: '2000-01-01T00:00:00.000000Z' })).to.deep.equal([]);
    expect(await store.get('00000000-0000-4000-8000-000000000999')).to.equal(undefined);
    // Visible through the API too.
    expect((await api(t, f).get(`/activeflows/${rec.id}`)).body.executed_actions).to.have.length(30);
  });

  it('PgFlowStore returns live flows of the customer only', async () => {
    const flow = await api(t, f).post('/flows', { actions: [{ type: 'answer' }] });
    const store = new PgFlowStore(t.ctx.db);
    expect((await store.get(flow.body.id, f.customer.id))!.actions[0]!.type).to.equal('answer');
    const other = await createFixture(t.ctx);
    expect(await store.get(flow.body.id, other.customer.id)).to.equal(undefined);
    await api(t, f).del(`/flows/${flow.body.id}`);
    expect(await store.get(flow.body.id, f.customer.id)).to.equal(undefined);
  });
});
