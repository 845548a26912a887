// The /conferences and /conferencecalls REST surface without calls: validation, 404s, states, and
// the host (a media-app node) taking a new conference from starting to progressing.
import { expect } from 'chai';
import request from 'supertest';
import { newId } from '../../core/ids';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { conferencecallsRepo } from '../../core/repos/conferencecalls';
import { terminatedRoom } from './support';
import { testDb, truncateAll } from '../../testkit/db';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { eventsFor, startPlatform, until, type Platform } from '../../testkit/media-app/harness';

describe('conferences REST', function () {
  this.timeout(60_000);
  let p: Platform;
  let t: TestApp;
  let f: Fixture;

  before(async () => {
    await truncateAll();
    p = await startPlatform();
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, DATA_DIR: p.config.dataDir } });
    f = await createFixture(t.ctx);
  });
  after(async () => {
    await t?.close();
    await p?.close();
  });

  const q = { accesskey: '' };
  beforeEach(() => (q.accesskey = f.accesskey));
  const post = (url: string, body?: object) => request(t.app).post(`/v1.0${url}`).query(q).send(body);
  const get = (url: string) => request(t.app).get(`/v1.0${url}`).query(q);
  const put = (url: string, body: object) => request(t.app).put(`/v1.0${url}`).query(q).send(body);
  const del = (url: string) => request(t.app).delete(`/v1.0${url}`).query(q);

  function expectError(res: request.Response, http: number, reason: string) {
    expect(res.status, JSON.stringify(res.body)).to.equal(http);
    expect(res.body.error).to.include({ reason });
    expect(res.body.error.request_id).to.be.a('string');
  }

  it('creates a conference that starts at once and is hosted (progressing), with every field', async () => {
    const res = await post('/conferences', { type: 'conference', name: 'standup', detail: 'daily', data: { k: 1 }, timeout: 0 });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.include({ type: 'conference', status: 'starting', name: 'standup', detail: 'daily', timeout: 0, customer_id: f.customer.id });
    expect(res.body.data).to.deep.equal({ k: 1 });
    expect(res.body).to.include({ pre_flow_id: '00000000-0000-0000-0000-000000000000', recording_id: '00000000-0000-0000-0000-000000000000' });
    expect(res.body.conferencecall_ids).to.deep.equal([]);
    expect(res.body.tm_end).to.equal('9999-01-01 00:00:00.000000');
    const hosted = await until(async () => ((await get(`/conferences/${res.body.id}`)).body.status === 'progressing' ? true : null), 10_000, 'progressing');
    expect(hosted).to.equal(true);
    expect(await p.redis.get(`${p.config.redisKeyPrefix}conference-node:${res.body.id}`)).to.equal(p.app.nodeId);
    const list = await get('/conferences');
    expect(list.status).to.equal(200);
    expect(list.body.result.map((c: { id: string }) => c.id)).to.include(res.body.id);
    expect((await eventsFor(p.redis, res.body.id)).map((e) => e.event_type).slice(0, 2)).to.deep.equal(['conference_created', 'conference_updated']);
  });

  it('refuses a bad type, unknown fields and bad values', async () => {
    expectError(await post('/conferences', { type: 'party' }), 400, 'INVALID_ARGUMENT');
    expectError(await post('/conferences', { type: 'queue' }), 400, 'INVALID_ARGUMENT');
    expectError(await post('/conferences', {}), 400, 'INVALID_ARGUMENT');
    expectError(await post('/conferences', { type: 'conference', colour: 'red' }), 400, 'INVALID_ARGUMENT');
    expectError(await post('/conferences', { type: 'conference', timeout: -1 }), 400, 'INVALID_ARGUMENT');
    expectError(await post('/conferences', { type: 'conference', pre_flow_id: 'nope' }), 400, 'INVALID_ARGUMENT');
    expectError(await post('/conferences', { type: 'conference', pre_flow_id: newId() }), 404, 'FLOW_NOT_FOUND');
  });

  it('timeout 1–59 s becomes a day; a client id is kept and cannot be reused', async () => {
    const id = newId();
    const res = await post('/conferences', { type: 'connect', id, timeout: 30 });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ id, timeout: 86_400, type: 'connect' });
    expectError(await post('/conferences', { type: 'connect', id }), 409, 'ALREADY_EXISTS');
  });

  it('unknown ids are 404, malformed ids 400', async () => {
    expectError(await get(`/conferences/${newId()}`), 404, 'RESOURCE_NOT_FOUND');
    expectError(await get('/conferences/not-a-uuid'), 400, 'INVALID_ID');
    expectError(await put(`/conferences/${newId()}`, { name: 'x' }), 404, 'RESOURCE_NOT_FOUND');
    expectError(await del(`/conferences/${newId()}`), 404, 'RESOURCE_NOT_FOUND');
    expectError(await post(`/conferences/${newId()}/recording_start`, {}), 404, 'RESOURCE_NOT_FOUND');
    expectError(await post(`/conferences/${newId()}/recording_stop`), 404, 'RESOURCE_NOT_FOUND');
    expectError(await get(`/conferencecalls/${newId()}`), 404, 'RESOURCE_NOT_FOUND');
    expectError(await del(`/conferencecalls/${newId()}`), 404, 'RESOURCE_NOT_FOUND');
    expectError(await post(`/conferencecalls/${newId()}/mute`, {}), 404, 'RESOURCE_NOT_FOUND');
  });

  it('another customer sees none of it', async () => {
    const res = await post('/conferences', { type: 'conference' });
    const other = await createFixture(t.ctx);
    const r = await request(t.app).get(`/v1.0/conferences/${res.body.id}`).query({ accesskey: other.accesskey });
    expectError(r, 404, 'RESOURCE_NOT_FOUND');
    const list = await request(t.app).get('/v1.0/conferences').query({ accesskey: other.accesskey });
    expect(list.body.result).to.deep.equal([]);
  });

  it('PUT changes name, detail, data, timeout and flows, never the type', async () => {
    const flow = await flowsRepo(await testDb()).create({ customer_id: f.customer.id, actions: parseActions([{ type: 'answer' }]) } as never);
    const res = await post('/conferences', { type: 'conference', name: 'a' });
    const up = await put(`/conferences/${res.body.id}`, { name: 'b', detail: 'd', data: { x: 'y' }, timeout: 120, pre_flow_id: flow.id, post_flow_id: '' });
    expect(up.status, JSON.stringify(up.body)).to.equal(200);
    expect(up.body).to.include({ name: 'b', detail: 'd', timeout: 120, pre_flow_id: flow.id, type: 'conference' });
    expect(up.body.data).to.deep.equal({ x: 'y' });
    expectError(await put(`/conferences/${res.body.id}`, { type: 'connect' }), 400, 'INVALID_ARGUMENT');
    expectError(await put(`/conferences/${res.body.id}`, { post_flow_id: newId() }), 404, 'FLOW_NOT_FOUND');
  });

  it('recording needs a progressing conference; stop needs an active recording; DELETE ends it', async () => {
    const res = await post('/conferences', { type: 'conference' });
    await until(async () => ((await get(`/conferences/${res.body.id}`)).body.status === 'progressing' ? true : null), 10_000, 'progressing');
    expectError(await post(`/conferences/${res.body.id}/recording_stop`), 409, 'RECORDING_NOT_ACTIVE');
    expectError(await post(`/conferences/${res.body.id}/recording_start`, { format: 'mp3' }), 400, 'INVALID_ARGUMENT');
    // an empty room records silence: start, refuse a second, stop
    const r1 = await post(`/conferences/${res.body.id}/recording-start`, { format: 'wav', duration: 5 });
    expect(r1.status, JSON.stringify(r1.body)).to.equal(200);
    expectError(await post(`/conferences/${res.body.id}/recording_start`, {}), 409, 'RECORDING_ALREADY_ACTIVE');
    const s1 = await post(`/conferences/${res.body.id}/recording-stop`);
    expect(s1.status).to.equal(200);
    await until(async () => ((await get(`/conferences/${res.body.id}`)).body.recording_id === '00000000-0000-0000-0000-000000000000' ? true : null), 10_000, 'recording slot free');
    const d = await del(`/conferences/${res.body.id}`);
    expect(d.status).to.equal(200);
    expect(d.body.tm_delete).to.not.equal('9999-01-01 00:00:00.000000');
    expectError(await get(`/conferences/${res.body.id}`), 404, 'RESOURCE_NOT_FOUND');
    expectError(await del(`/conferences/${res.body.id}`), 404, 'RESOURCE_NOT_FOUND');
    const row = await terminatedRoom(res.body.id, 'terminated');
    expect(row.node_id).to.equal(p.app.nodeId);
    // its host claim is released
    await until(async () => !(await p.redis.get(`${p.config.redisKeyPrefix}conference-node:${res.body.id}`)), 5000, 'host key released');
  });

  it('a recording with a duration ends by itself and frees the slot', async () => {
    const onEnd = await flowsRepo(await testDb()).create({ customer_id: f.customer.id, actions: parseActions([{ type: 'variable_set', option: { key: 'k', value: 'v' } }]) } as never);
    const res = await post('/conferences', { type: 'conference' });
    await until(async () => ((await get(`/conferences/${res.body.id}`)).body.status === 'progressing' ? true : null), 10_000, 'progressing');
    expectError(await post(`/conferences/${res.body.id}/recording_start`, { on_end_flow_id: newId() }), 404, 'FLOW_NOT_FOUND');
    expect((await post(`/conferences/${res.body.id}/recording_start`, { format: 'wav', duration: 1, on_end_flow_id: onEnd.id })).status).to.equal(200);
    const rec = await until(
      async () => {
        const r = await (await testDb())('recordings').where({ reference_id: res.body.id }).first();
        return r?.status === 'ended' ? r : null;
      },
      10_000,
      'recording ended by duration',
    );
    expect(rec.tm_end!.getTime() - rec.tm_start!.getTime()).to.be.within(800, 4000);
    await until(async () => ((await get(`/conferences/${res.body.id}`)).body.recording_id === '00000000-0000-0000-0000-000000000000' ? true : null), 5000, 'slot free');
    expect((await eventsFor(p.redis, rec.id)).map((e) => e.event_type)).to.deep.equal(['recording_started', 'recording_finished']);
    // on_end_flow_id runs with the recording as its reference
    const af = await until(async () => (await (await testDb())('activeflows').where({ reference_id: rec.id }).first()) ?? null, 10_000, 'on_end flow');
    expect(af).to.include({ reference_type: 'recording', flow_id: onEnd.id });
  });

  it('PUT of a timeout the conference has already outlived ends it (timeouts count from creation)', async () => {
    const res = await post('/conferences', { type: 'conference', timeout: 0 });
    await until(async () => ((await get(`/conferences/${res.body.id}`)).body.status === 'progressing' ? true : null), 10_000, 'progressing');
    await (
      await testDb()
    )('conferences')
      .where({ id: res.body.id })
      .update({ tm_create: new Date(Date.now() - 61_000) });
    // a long timeout changes nothing yet
    expect((await put(`/conferences/${res.body.id}`, { timeout: 3600 })).status).to.equal(200);
    await new Promise((r) => setTimeout(r, 500));
    expect((await get(`/conferences/${res.body.id}`)).body.status).to.equal('progressing');
    expect((await put(`/conferences/${res.body.id}`, { timeout: 60 })).status).to.equal(200);
    await until(async () => ((await get(`/conferences/${res.body.id}`)).body.status === 'terminated' ? true : null), 10_000, 'terminated by timeout');
  });

  it('a participant that already left cannot be kicked again; one still joining can (it never gets in)', async () => {
    const res = await post('/conferences', { type: 'conference' });
    // hosted first: a kick with no node hosting the room completes at once (leaved), the path under test
    // is the kick sent to the host (leaving, then the host's leaved)
    await until(async () => ((await get(`/conferences/${res.body.id}`)).body.status === 'progressing' ? true : null), 10_000, 'progressing');
    const repo = conferencecallsRepo(await testDb());
    const joining = await repo.create({ customer_id: f.customer.id, conference_id: res.body.id, reference_id: newId() });
    const k = await del(`/conferencecalls/${joining.id}`);
    expect(k.status).to.equal(200);
    expect(k.body.status).to.equal('leaving');
    await until(async () => ((await get(`/conferencecalls/${joining.id}`)).body.status === 'leaved' ? true : null), 10_000, 'leaved');
    expectError(await del(`/conferencecalls/${joining.id}`), 409, 'STATE_INVALID');
    expectError(await post(`/conferencecalls/${joining.id}/mute`, { direction: 'in' }), 409, 'STATE_INVALID');
  });
});
