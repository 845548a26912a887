// /outplans, /outdials (+ targets), /campaigns, /campaigncalls against real Postgres and Redis:
// CRUD, defaults, response schemas, status transitions, events, and bad input in the spec's envelope.
// No runner here (nothing dials): test/campaigns/runner.test.ts drives real calls.
import { expect } from 'chai';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { closeCommandBus } from '../../control-api/calls/bus';
import { EMPTY_UUID } from '../../core/ids';
import { campaigncallSchema, campaignSchema, outdialSchema, outdialtargetSchema, outplanSchema } from '../../control-api/campaigns/schemas';
import { api, expectError, recentEventsFor } from './support';

describe('campaigns API: outplans, outdials, campaigns, campaigncalls', function () {
  this.timeout(20_000);
  let t: TestApp;
  let f: Fixture;
  let a: ReturnType<typeof api>;

  before(async () => {
    t = await buildTestApp({ env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RATE_LIMIT_SCALE: '0' } });
  });
  after(async () => {
    await closeCommandBus(t.ctx);
    await t.close();
  });
  beforeEach(async () => {
    await truncateAll(t.ctx.db);
    f = await createFixture(t.ctx);
    a = api(t, f);
  });

  const source = { type: 'tel', target: '+15550001111' };
  async function outplan(body: object = {}) {
    const r = await a.post('/outplans', { name: 'plan', source, ...body });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body;
  }
  async function outdial() {
    const r = await a.post('/outdials', { name: 'list', data: 'd' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body;
  }
  async function campaign(body: object = {}) {
    const r = await a.post('/campaigns', { name: 'c', service_level: 2, actions: [{ type: 'hangup' }], ...body });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body;
  }

  describe('/outplans', () => {
    it('create fills the defaults; get, list, update, dial_info, delete', async () => {
      const p = await outplan();
      outplanSchema.strict().parse(p);
      expect(p).to.include({ name: 'plan', dial_timeout: 30000, try_interval: 60000, max_try_count_0: 1, max_try_count_4: 1, customer_id: f.customer.id });
      expect(p.source).to.deep.equal(source);
      expect(p.tm_delete).to.equal('9999-01-01 00:00:00.000000');
      expect((await a.get(`/outplans/${p.id}`)).body.id).to.equal(p.id);
      const list = await a.get('/outplans');
      expect(list.body.result.map((x: { id: string }) => x.id)).to.deep.equal([p.id]);
      expect((await a.put(`/outplans/${p.id}`, { name: 'renamed' })).body).to.include({ name: 'renamed', dial_timeout: 30000 });
      const d = await a.put(`/outplans/${p.id}/dial_info`, { dial_timeout: 5000, try_interval: 0, max_try_count_0: 3, max_try_count_1: 0 });
      expect(d.body).to.include({ dial_timeout: 5000, try_interval: 0, max_try_count_0: 3, max_try_count_1: 0, name: 'renamed' });
      expect((await a.del(`/outplans/${p.id}`)).status).to.equal(200);
      expectError(await a.get(`/outplans/${p.id}`), 404, 'RESOURCE_NOT_FOUND');
      expect((await a.get('/outplans')).body.result).to.deep.equal([]);
    });

    it('bad input: 400 in the envelope (range, type, missing source, unknown field, bad id); 404 for others', async () => {
      const bad = [
        { source, dial_timeout: 10 },
        { source, try_interval: -1 },
        { source, max_try_count_0: 101 },
        { source, max_try_count_2: 1.5 },
        { source: { type: 'pigeon', target: 'x' } },
        { name: 'no source' },
        { source, colour: 'red' },
      ];
      for (const body of bad) expectError(await a.post('/outplans', body), 400, 'INVALID_ARGUMENT');
      expectError(await a.get('/outplans/not-a-uuid'), 400, 'INVALID_ID');
      const other = await createFixture(t.ctx);
      const theirs = (await api(t, other).post('/outplans', { source })).body;
      expectError(await a.get(`/outplans/${theirs.id}`), 404, 'RESOURCE_NOT_FOUND');
      expectError(await a.put(`/outplans/${theirs.id}/dial_info`, { dial_timeout: 2000 }), 404, 'RESOURCE_NOT_FOUND');
    });
  });

  describe('/outdials and targets', () => {
    it('CRUD, targets with destinations and try counts, events', async () => {
      const o = await outdial();
      outdialSchema.strict().parse(o);
      expect(o).to.include({ name: 'list', data: 'd', campaign_id: EMPTY_UUID });
      const tgt = await a.post(`/outdials/${o.id}/targets`, {
        name: 'alice',
        data: 'vip',
        destination_0: { type: 'tel', target: '+15550002222' },
        destination_2: { type: 'sip', target: 'alice@127.0.0.1:5099' },
      });
      expect(tgt.status, JSON.stringify(tgt.body)).to.equal(200);
      outdialtargetSchema.strict().parse(tgt.body);
      expect(tgt.body).to.include({ status: 'idle', try_count_0: 0, try_count_2: 0, destination_1: null, name: 'alice', data: 'vip' });
      expect(tgt.body.destination_2).to.deep.equal({ type: 'sip', target: 'alice@127.0.0.1:5099' });
      expect((await a.get(`/outdials/${o.id}/targets`)).body.result).to.have.length(1);
      expect((await a.get(`/outdials/${o.id}/targets/${tgt.body.id}`)).body.id).to.equal(tgt.body.id);
      expect((await a.put(`/outdials/${o.id}`, { name: 'n2' })).body.name).to.equal('n2');
      expect((await a.put(`/outdials/${o.id}/data`, { data: 'x' })).body.data).to.equal('x');
      const c = await campaign();
      expect((await a.put(`/outdials/${o.id}/campaign_id`, { campaign_id: c.id })).body.campaign_id).to.equal(c.id);
      expect((await a.del(`/outdials/${o.id}/targets/${tgt.body.id}`)).status).to.equal(200);
      expectError(await a.get(`/outdials/${o.id}/targets/${tgt.body.id}`), 404, 'RESOURCE_NOT_FOUND');
      expect((await a.del(`/outdials/${o.id}`)).status).to.equal(200);
      const types = (await recentEventsFor(t.ctx.redis, o.id)).map((e) => e.event_type);
      expect(types).to.deep.equal(['outdial_created', 'outdial_updated', 'outdial_updated', 'outdial_updated', 'outdial_deleted']);
    });

    it('bad targets: no destination, non-E.164 tel, undialable type, empty target; unknown outdial or campaign', async () => {
      const o = await outdial();
      const bad = [
        { name: 'none' },
        { destination_0: null },
        { destination_0: { type: 'tel', target: '5550002222' } },
        { destination_0: { type: 'email', target: 'a@b.c' } },
        { destination_1: { type: 'sip', target: '' } },
        { destination_5: { type: 'sip', target: 'a@b' } },
      ];
      for (const body of bad) expectError(await a.post(`/outdials/${o.id}/targets`, body), 400, 'INVALID_ARGUMENT');
      expectError(await a.post(`/outdials/${EMPTY_UUID.replace(/0$/, '1')}/targets`, { destination_0: { type: 'sip', target: 'a@b' } }), 404, 'RESOURCE_NOT_FOUND');
      expectError(await a.post('/outdials', { campaign_id: EMPTY_UUID.replace(/0$/, '1') }), 404, 'RESOURCE_NOT_FOUND');
      expectError(await a.post('/outdials', { campaign_id: 'nope' }), 400, 'INVALID_ARGUMENT');
    });
  });

  describe('/campaigns', () => {
    it('create with defaults and references; response schema; events', async () => {
      const p = await outplan();
      const o = await outdial();
      const c = await campaign({ outplan_id: p.id, outdial_id: o.id });
      campaignSchema.strict().parse(c);
      expect(c).to.include({ status: 'stop', type: 'call', end_handle: 'stop', service_level: 2, outplan_id: p.id, outdial_id: o.id, queue_id: EMPTY_UUID, next_campaign_id: EMPTY_UUID });
      expect(c.actions).to.have.length(1);
      expect(c.actions[0].type).to.equal('hangup');
      expect(c.actions[0].id).to.match(/^[0-9a-f-]{36}$/);
      const upd = await a.put(`/campaigns/${c.id}`, { name: 'renamed', end_handle: 'continue', type: 'flow' });
      expect(upd.body).to.include({ name: 'renamed', end_handle: 'continue', type: 'flow', service_level: 2 });
      expect((await a.put(`/campaigns/${c.id}/service_level`, { service_level: 7 })).body.service_level).to.equal(7);
      expect((await a.put(`/campaigns/${c.id}/actions`, { actions: [{ type: 'talk', option: { text: 'hi', language: 'en-US' } }] })).body.actions[0].type).to.equal('talk');
      const next = await campaign();
      expect((await a.put(`/campaigns/${c.id}/next_campaign_id`, { next_campaign_id: next.id })).body.next_campaign_id).to.equal(next.id);
      expect((await a.put(`/campaigns/${c.id}/resource_info`, { outplan_id: EMPTY_UUID })).body.outplan_id).to.equal(EMPTY_UUID);
      expect((await a.get('/campaigns')).body.result).to.have.length(2);
      expect((await a.del(`/campaigns/${c.id}`)).status).to.equal(200);
      expectError(await a.get(`/campaigns/${c.id}`), 404, 'RESOURCE_NOT_FOUND');
      const types = (await recentEventsFor(t.ctx.redis, c.id)).map((e) => e.event_type);
      expect(types).to.deep.equal(['campaign_created', 'campaign_updated', 'campaign_updated', 'campaign_updated', 'campaign_updated', 'campaign_updated', 'campaign_deleted']);
    });

    it('bad input: service level, type, end handle, actions, unknown or foreign references (404 naming the field)', async () => {
      for (const service_level of [0, -1, 1001, 1.5, '2', null]) {
        expectError(await a.post('/campaigns', { service_level }), 400, 'INVALID_ARGUMENT');
      }
      const missing = expectError(await a.post('/campaigns', { name: 'x' }), 400, 'INVALID_ARGUMENT');
      expect(JSON.stringify(missing.details)).to.include('service_level');
      expectError(await a.post('/campaigns', { service_level: 1, type: 'sms' }), 400, 'INVALID_ARGUMENT');
      expectError(await a.post('/campaigns', { service_level: 1, end_handle: 'pause' }), 400, 'INVALID_ARGUMENT');
      expectError(await a.post('/campaigns', { service_level: 1, actions: [{ type: 'agent_call' }] }), 400, 'INVALID_ARGUMENT');
      expectError(await a.post('/campaigns', { service_level: 1, outplan_id: 'x' }), 400, 'INVALID_ARGUMENT');
      const unknown = '11111111-2222-3333-4444-555555555555';
      for (const field of ['outplan_id', 'outdial_id', 'queue_id', 'next_campaign_id']) {
        const e = expectError(await a.post('/campaigns', { service_level: 1, [field]: unknown }), 404, 'RESOURCE_NOT_FOUND');
        expect(e.details).to.deep.equal([{ field, issue: `no such ${field === 'next_campaign_id' ? 'campaign' : field.replace('_id', '')}` }]);
      }
      const other = api(t, await createFixture(t.ctx));
      const theirPlan = (await other.post('/outplans', { source })).body;
      expectError(await a.post('/campaigns', { service_level: 1, outplan_id: theirPlan.id }), 404, 'RESOURCE_NOT_FOUND');
      const c = await campaign();
      expectError(await a.put(`/campaigns/${c.id}/service_level`, { service_level: 0 }), 400, 'INVALID_ARGUMENT');
      expectError(await a.put(`/campaigns/${c.id}/next_campaign_id`, { next_campaign_id: c.id }), 400, 'INVALID_ARGUMENT');
      expectError(await other.get(`/campaigns/${c.id}`), 404, 'RESOURCE_NOT_FOUND');
    });

    it('status: run needs outdial and outplan; run, run again, stop; stopping cannot be asked for nor left for run', async () => {
      const bare = await campaign();
      expectError(await a.put(`/campaigns/${bare.id}/status`, { status: 'run' }), 409, 'STATE_INVALID');
      const p = await outplan();
      const o = await outdial();
      const c = await campaign({ outplan_id: p.id, outdial_id: o.id });
      const run = await a.put(`/campaigns/${c.id}/status`, { status: 'run' });
      expect(run.status, JSON.stringify(run.body)).to.equal(200);
      expect(run.body.status).to.equal('run');
      expect((await a.put(`/campaigns/${c.id}/status`, { status: 'run' })).body.status).to.equal('run');
      // a running campaign keeps its resources and cannot be deleted
      expectError(await a.del(`/campaigns/${c.id}`), 409, 'STATE_INVALID');
      expectError(await a.del(`/outdials/${o.id}`), 409, 'STATE_INVALID');
      expectError(await a.del(`/outplans/${p.id}`), 409, 'STATE_INVALID');
      expectError(await a.put(`/campaigns/${c.id}/resource_info`, { outdial_id: (await outdial()).id }), 409, 'STATE_INVALID');
      expectError(await a.put(`/campaigns/${c.id}`, { type: 'flow' }), 409, 'STATE_INVALID');
      expectError(await a.put(`/campaigns/${c.id}/status`, { status: 'stopping' }), 400, 'INVALID_ARGUMENT');
      expectError(await a.put(`/campaigns/${c.id}/status`, { status: 'paused' }), 400, 'INVALID_ARGUMENT');
      expectError(await a.put(`/campaigns/${c.id}/status`, {}), 400, 'INVALID_ARGUMENT');
      // no live campaign call: stop is immediate
      expect((await a.put(`/campaigns/${c.id}/status`, { status: 'stop' })).body.status).to.equal('stop');
      expect((await a.put(`/campaigns/${c.id}/status`, { status: 'stop' })).body.status).to.equal('stop');
      // stopping (live calls still up) refuses run
      await t.ctx.db('campaigns').where({ id: c.id }).update({ status: 'stopping' });
      expectError(await a.put(`/campaigns/${c.id}/status`, { status: 'run' }), 409, 'STATE_INVALID');
      expect((await a.put(`/campaigns/${c.id}/status`, { status: 'stop' })).body.status).to.equal('stopping');
      const types = (await recentEventsFor(t.ctx.redis, c.id)).map((e) => e.event_type);
      expect(types).to.deep.equal(['campaign_created', 'campaign_status_run', 'campaign_status_stop']);
    });
  });

  describe('/campaigncalls', () => {
    it('lists (all or by campaign), gets, deletes only when done; 404/400 otherwise', async () => {
      const p = await outplan();
      const o = await outdial();
      const c = await campaign({ outplan_id: p.id, outdial_id: o.id });
      const tgt = (await a.post(`/outdials/${o.id}/targets`, { destination_0: { type: 'sip', target: 'x@127.0.0.1:9' } })).body;
      const base = {
        customer_id: f.customer.id,
        campaign_id: c.id,
        outplan_id: p.id,
        outdial_id: o.id,
        outdial_target_id: tgt.id,
        source: JSON.stringify(source),
        destination: JSON.stringify(tgt.destination_0),
        tm_create: new Date(),
      };
      const [live] = await t.ctx
        .db('campaigncalls')
        .insert({ ...base, id: '11111111-0000-4000-8000-000000000001', status: 'dialing' })
        .returning('id');
      const [done] = await t.ctx
        .db('campaigncalls')
        .insert({ ...base, id: '11111111-0000-4000-8000-000000000002', status: 'done', result: 'fail' })
        .returning('id');
      const all = await a.get('/campaigncalls');
      expect(all.body.result).to.have.length(2);
      for (const cc of all.body.result) campaigncallSchema.strict().parse(cc);
      expect((await a.get('/campaigncalls', { campaign_id: c.id })).body.result).to.have.length(2);
      expect((await a.get('/campaigncalls', { campaign_id: EMPTY_UUID })).body.result).to.have.length(0);
      expect((await a.get(`/campaigns/${c.id}/campaigncalls`, { page_size: '1' })).body.next_page_token).to.not.equal('');
      expect((await a.get(`/campaigncalls/${done.id}`)).body).to.include({ status: 'done', result: 'fail' });
      expectError(await a.del(`/campaigncalls/${live.id}`), 409, 'STATE_INVALID');
      expect((await a.del(`/campaigncalls/${done.id}`)).status).to.equal(200);
      expectError(await a.get(`/campaigncalls/${done.id}`), 404, 'RESOURCE_NOT_FOUND');
      expectError(await a.get('/campaigncalls/zzz'), 400, 'INVALID_ID');
      expectError(await a.get('/campaigncalls', { campaign_id: 'zzz' }), 400, 'INVALID_ID');
    });
  });
});
