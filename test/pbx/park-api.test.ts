// The PBX API with real phones: /pbx_settings (feature codes, checked), /parkedcalls (park a live call
// by REST, list it, retrieve it to an extension that rings and answers), and the bad inputs: unknown
// call 404, a call not live 409, a slot out of range 400, an empty slot 404.
import { expect } from 'chai';
import { callsRepo } from '../../core/repos/calls';
import { parkSlots } from '../../core/pbx/park-slots';
import { until } from '../../testkit/media-app/harness';
import { party, type Stack } from '../xfer/support';
import { answerOn, call, caller, callWhere, hears, shareOf, usePhoneStack } from './support';
import request from 'supertest';

const [TONE_A, TONE_B, TONE_C] = [400, 1600, 2000];

describe('pbx: park API', function () {
  this.timeout(120_000);
  let s: Stack;
  let cid: string;
  const { newPhone } = usePhoneStack((x) => ((s = x), (cid = x.f.customer.id)));
  const put = (path: string, body: object) => request(s.t.app).put(`/v1.0${path}`).set('Authorization', `Bearer ${s.f.token}`).send(body);

  it('pbx_settings: defaults, a change, and settings that cannot work refused 400', async () => {
    const got = await s.api.get('/pbx_settings');
    expect(got.status).to.equal(200);
    expect(got.body).to.include({ group_pickup: '*8', directed_pickup_prefix: '**', park_lot: '700', park_slot_first: 701, park_slot_last: 720, park_timeout_sec: 45, voicemail_own: '*97' });
    const clash = await put('/pbx_settings', { group_pickup: '700' });
    expect(clash.status).to.equal(400);
    expect(clash.body.error?.message ?? JSON.stringify(clash.body)).to.match(/same code 700/);
    expect((await put('/pbx_settings', { park_lot: '705' })).status, 'the lot inside the slots').to.equal(400);
    expect((await put('/pbx_settings', { park_slot_first: 800, park_slot_last: 1000 })).status, 'too many slots').to.equal(400);
    expect((await put('/pbx_settings', { group_pickup: '*8<x>' })).status, 'not a dial string').to.equal(400);
    expect((await put('/pbx_settings', { bogus: 1 })).status, 'unknown field').to.equal(400);
    const ok = await put('/pbx_settings', { park_timeout_sec: 60 });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.include({ park_timeout_sec: 60, park_lot: '700' });
    expect((await put('/pbx_settings', { park_timeout_sec: 45 })).status).to.equal(200);
  });

  it('bad inputs: unknown call 404, a call not live 409, a slot out of range 400, an empty slot 404', async () => {
    const unknown = await s.api.post('/parkedcalls', { call_id: '6f1d0a52-9a57-4d39-9b8e-0d4f7f0b0c11' });
    expect(unknown.status).to.equal(404);
    expect(JSON.stringify(unknown.body)).to.include('CALL_NOT_FOUND');
    const row = await callsRepo(s.t.ctx.db).create({
      customer_id: cid,
      source: { type: 'tel', target: '+899100000003' },
      destination: { type: 'sip', target: 'z@127.0.0.1:5999' },
      direction: 'outgoing',
    });
    const dialing = await s.api.post('/parkedcalls', { call_id: row.id });
    expect(dialing.status).to.equal(409);
    expect(JSON.stringify(dialing.body)).to.include('CALL_STATE_INVALID');
    await callsRepo(s.t.ctx.db).hangup(row.id, 'failure');
    const ended = await s.api.post('/parkedcalls', { call_id: row.id });
    expect(ended.status).to.equal(409);
    expect(JSON.stringify(ended.body)).to.include('CALL_ALREADY_HANGUP');
    const range = await s.api.post('/parkedcalls', { call_id: row.id, slot: 999 });
    expect(range.status).to.equal(400);
    expect(JSON.stringify(range.body)).to.include('slot');
    expect((await s.api.post('/parkedcalls', { call_id: 'nope' })).status).to.equal(400);
    expect((await s.api.get('/parkedcalls/710')).status).to.equal(404);
    expect((await s.api.get('/parkedcalls/7x')).status).to.equal(400);
    const empty = await s.api.post('/parkedcalls/710/retrieve', { destination: { type: 'extension', target: 'nobody' } });
    expect(empty.status).to.equal(404);
    expect((await s.api.post('/parkedcalls/1/retrieve', { destination: { type: 'extension', target: 'nobody' } })).status).to.equal(400);
  });

  it('a slot left behind by a call that ended (its node died) is freed when the slots are read', async () => {
    const row = await callsRepo(s.t.ctx.db).create({
      customer_id: cid,
      source: { type: 'tel', target: '+899100000004' },
      destination: { type: 'sip', target: 'z@127.0.0.1:5999' },
      direction: 'outgoing',
    });
    await callsRepo(s.t.ctx.db).hangup(row.id, 'failure');
    const now = new Date().toISOString();
    const table = parkSlots(s.p.redis, s.p.config.redisKeyPrefix);
    expect(await table.claim(715, 715, { call_id: row.id, customer_id: cid, node_id: 'gone', parker: null, tm_parked: now, tm_timeout: now })).to.include({ slot: 715 });
    expect((await s.api.get('/parkedcalls')).body.result).to.deep.equal([]);
    expect(await table.get(cid, 715)).to.equal(null);
  });

  it('parks a live call by REST (the peer released), lists it, retrieves it to an extension', async () => {
    const [a, b, c] = [await newPhone(TONE_A), await newPhone(TONE_B), await newPhone(TONE_C)];
    const bPhone = await answerOn(b, party({ rtpPort: b.audio.port, byeTimeoutMs: 40_000 }));
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port }));
    await hears(a.audio, TONE_B, 'A hears B');
    const aRow = await callWhere(s, { customer_id: cid, direction: 'incoming', from: a.extension }, 'progressing', 'A up');
    const parked = await s.api.post('/parkedcalls', { call_id: aRow.id, slot: 705 });
    expect(parked.status, JSON.stringify(parked.body)).to.equal(200);
    expect(parked.body).to.include({ slot: 705, call_id: aRow.id, customer_id: cid });
    // B is released; A hears the music, nothing of B
    const rb = await bPhone.done;
    expect(rb.code, rb.errors).to.equal(0);
    await until(() => shareOf(a.audio, TONE_B) < 0.05 && a.audio.framesBetween(Date.now() - 800) > 10, 10_000, 'A on hold');
    expect((await s.api.post('/parkedcalls', { call_id: aRow.id })).status, 'parked already').to.equal(409);
    const list = await s.api.get('/parkedcalls');
    expect(list.status).to.equal(200);
    expect(list.body.result.map((p: { slot: number; call_id: string }) => [p.slot, p.call_id])).to.deep.equal([[705, aRow.id]]);
    expect((await s.api.get('/parkedcalls/705')).body).to.include({ call_id: aRow.id });
    // retrieve to C: C's phone rings and answers, then talks to A
    const cPhone = await answerOn(c, party({ rtpPort: c.audio.port, byeTimeoutMs: 40_000 }));
    const got = await s.api.post('/parkedcalls/705/retrieve', { destination: { type: 'extension', target: c.extension } });
    expect(got.status, JSON.stringify(got.body)).to.equal(200);
    await hears(a.audio, TONE_C, 'A hears C');
    await hears(c.audio, TONE_A, 'C hears A');
    expect((await s.api.get('/parkedcalls')).body.result).to.deep.equal([]);
    expect((await s.api.post(`/calls/${aRow.id}/hangup`, undefined)).status).to.equal(200);
    const [ra, rc] = await Promise.all([aPhone.done, cPhone.done]);
    expect(ra.code, ra.errors).to.equal(0);
    expect(rc.code, rc.errors).to.equal(0);
  });
});
