import { expect } from 'chai';
import type { TestApp, Fixture } from '../../../testkit/api';
import { createFixture } from '../../../testkit/api';
import { EMPTY_UUID } from '../../../core/ids';
import { api, freshFixture, startApp, stopApp } from './support';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

describe('flows CRUD', function () {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await startApp();
  });
  after(async () => stopApp(t));
  beforeEach(async () => {
    f = await freshFixture(t);
  });

  const ivr = () => [
    { type: 'answer' },
    { type: 'talk', option: { text: 'hello', language: 'en-US' } },
    { id: '11111111-1111-4111-8111-111111111111', type: 'digits_receive', option: { duration: 3000, length: 1 } },
    { type: 'goto', option: { target_id: '11111111-1111-4111-8111-111111111111', loop_count: 2 } },
    { type: 'hangup' },
  ];

  it('creates a flow with server-generated action ids and RFC 3339 timestamps', async () => {
    const r = await api(t, f).post('/flows', { name: 'ivr', detail: 'd', actions: ivr() });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.include({ name: 'ivr', detail: 'd', type: 'flow', customer_id: f.customer.id, on_complete_flow_id: EMPTY_UUID });
    expect(r.body.id).to.match(UUID_RE);
    expect(r.body.actions).to.have.length(5);
    for (const a of r.body.actions) expect(a.id).to.match(UUID_RE);
    expect(r.body.actions[2].id).to.equal('11111111-1111-4111-8111-111111111111');
    expect(new Set(r.body.actions.map((a: { id: string }) => a.id)).size).to.equal(5);
    expect(r.body.tm_create).to.match(RFC3339);
    expect(r.body.tm_update).to.equal(null);
    expect(r.body.tm_delete).to.equal(null);

    const g = await api(t, f).get(`/flows/${r.body.id}`);
    expect(g.status).to.equal(200);
    expect(g.body).to.deep.equal(r.body);
  });

  it('rejects bad actions with INVALID_ARGUMENT naming the action index and field', async () => {
    const bad = [{ type: 'answer' }, { type: 'sleep', option: { duration: 'long' } }, { type: 'no_such_type' }];
    const r = await api(t, f).post('/flows', { actions: bad });
    expect(r.status).to.equal(400);
    expect(r.body.error.reason).to.equal('INVALID_ARGUMENT');
    const fields = r.body.error.details.map((d: { field: string; index: number }) => `${d.index}:${d.field}`);
    expect(fields).to.include('1:actions[1].option.duration');
    expect(fields).to.include('2:actions[2].type');
    expect(r.body.error.message).to.match(/^actions\[1\]\.option\.duration/);

    const retired = await api(t, f).post('/flows', { actions: [{ type: 'agent_call' }] });
    expect(retired.status).to.equal(400);
    expect(retired.body.error.details[0].message).to.match(/use connect/);

    const dangling = await api(t, f).post('/flows', { actions: [{ type: 'goto', option: { target_id: '22222222-2222-4222-8222-222222222222' } }] });
    expect(dangling.status).to.equal(400);
    expect(dangling.body.error.details[0]).to.include({ field: 'actions[0].option.target_id', index: 0 });

    const dup = await api(t, f).post('/flows', {
      actions: [
        { id: '33333333-3333-4333-8333-333333333333', type: 'answer' },
        { id: '33333333-3333-4333-8333-333333333333', type: 'hangup' },
      ],
    });
    expect(dup.status).to.equal(400);
    expect(dup.body.error.details[0].field).to.equal('actions[1].id');

    const unknownField = await api(t, f).post('/flows', { actions: [], colour: 'red' });
    expect(unknownField.status).to.equal(400);
    expect(unknownField.body.error.details[0]).to.include({ field: 'colour' });

    const notArray = await api(t, f).post('/flows', { actions: { type: 'answer' } });
    expect(notArray.status).to.equal(400);
    expect(notArray.body.error.reason).to.equal('INVALID_ARGUMENT');
  });

  it('names a non-string action type as its JSON, not "[object Object]"', async () => {
    const r = await api(t, f).post('/flows', { actions: [{ type: { kind: 'talk' } }, { type: 42 }, { type: 'no_such_type' }] });
    expect(r.status).to.equal(400);
    expect(r.body.error.reason).to.equal('INVALID_ARGUMENT');
    const messages = r.body.error.details.map((d: { message: string }) => d.message);
    expect(messages).to.include('{"kind":"talk"} is not an action type');
    expect(messages).to.include('42 is not an action type');
    expect(messages).to.include('"no_such_type" is not an action type');
  });

  it('accepts deprecated action types', async () => {
    const r = await api(t, f).post('/flows', {
      actions: [
        { id: '44444444-4444-4444-8444-444444444444', type: 'answer' },
        { type: 'condition_call_digits', option: { length: 1, key: '#', false_target_id: '44444444-4444-4444-8444-444444444444' } },
      ],
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
  });

  it('PUT replaces actions, regenerates omitted ids, keeps absent fields and sets tm_update', async () => {
    const c = await api(t, f).post('/flows', { name: 'a', detail: 'keep', actions: ivr() });
    const u = await api(t, f).put(`/flows/${c.body.id}`, { name: 'b', actions: [{ type: 'answer' }, { type: 'hangup' }] });
    expect(u.status, JSON.stringify(u.body)).to.equal(200);
    expect(u.body).to.include({ name: 'b', detail: 'keep' });
    expect(u.body.actions.map((a: { type: string }) => a.type)).to.deep.equal(['answer', 'hangup']);
    for (const a of u.body.actions) expect(a.id).to.match(UUID_RE);
    expect(u.body.tm_update).to.match(RFC3339);

    const bad = await api(t, f).put(`/flows/${c.body.id}`, { actions: [{ type: 'talk', option: { text: 5 } }] });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.details[0]).to.include({ field: 'actions[0].option.text', index: 0 });
    // The failed PUT changed nothing.
    expect((await api(t, f).get(`/flows/${c.body.id}`)).body.actions).to.have.length(2);
  });

  it('on_complete_flow_id must be another flow of the customer', async () => {
    const a = await api(t, f).post('/flows', { actions: [] });
    const b = await api(t, f).post('/flows', { actions: [], on_complete_flow_id: a.body.id });
    expect(b.status).to.equal(200);
    expect(b.body.on_complete_flow_id).to.equal(a.body.id);
    const self = await api(t, f).put(`/flows/${a.body.id}`, { on_complete_flow_id: a.body.id });
    expect(self.status).to.equal(400);
    expect(self.body.error.details[0].field).to.equal('on_complete_flow_id');
    const missing = await api(t, f).post('/flows', { actions: [], on_complete_flow_id: '55555555-5555-4555-8555-555555555555' });
    expect(missing.status).to.equal(400);
  });

  it('DELETE is soft and returns the deleted flow; it then is gone from GET and lists', async () => {
    const c = await api(t, f).post('/flows', { name: 'gone', actions: [{ type: 'answer' }] });
    const d = await api(t, f).del(`/flows/${c.body.id}`);
    expect(d.status).to.equal(200);
    expect(d.body.id).to.equal(c.body.id);
    expect(d.body.tm_delete).to.match(RFC3339);
    const g = await api(t, f).get(`/flows/${c.body.id}`);
    expect(g.status).to.equal(404);
    expect(g.body.error.reason).to.equal('FLOW_NOT_FOUND');
    expect((await api(t, f).del(`/flows/${c.body.id}`)).body.error.reason).to.equal('FLOW_NOT_FOUND');
    const row = await t.ctx.db('flows').where({ id: c.body.id }).first();
    expect(row!.tm_delete).to.not.equal(null);
    const l = await api(t, f).get('/flows');
    expect(l.body.result).to.deep.equal([]);
  });

  it('lists newest first with pagination; other customers see nothing', async () => {
    for (let i = 0; i < 3; i++) await api(t, f).post('/flows', { name: `f${i}`, actions: [] });
    const p1 = await api(t, f).get('/flows').query({ page_size: 2 });
    expect(p1.body.result.map((x: { name: string }) => x.name)).to.deep.equal(['f2', 'f1']);
    const p2 = await api(t, f).get('/flows').query({ page_size: 2, page_token: p1.body.next_page_token });
    expect(p2.body.result.map((x: { name: string }) => x.name)).to.deep.equal(['f0']);
    expect(p2.body.next_page_token).to.equal('');

    const other = await createFixture(t.ctx);
    const id = p1.body.result[0].id;
    const g = await api(t, other).get(`/flows/${id}`);
    expect(g.status).to.equal(404);
    expect((await api(t, other).get('/flows')).body.result).to.deep.equal([]);
    expect((await api(t, other).put(`/flows/${id}`, { name: 'x' })).status).to.equal(404);
    expect((await api(t, f).get('/flows/not-a-uuid')).body.error.reason).to.equal('INVALID_ID');
  });
});
