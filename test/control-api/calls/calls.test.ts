/**
 * POST /calls and the live-call commands against real Postgres and Redis. BullMQ Workers on the real
 * queues stand in for media-app's consumer side, only to see what was enqueued and where.
 */
import { expect } from 'chai';
import type { TestApp, Fixture } from '../../../testkit/api';
import { createFixture } from '../../../testkit/api';
import { api, BusQueues, freshFixture, startApp, stopApp } from '../flows/support';
import { ORIGINATE_QUEUE, callNodeKey, nodeAliveKey, nodeQueueName } from '../../../core/commands/contracts';
import { numbersRepo } from '../../../core/repos/numbers';
import { extensionsRepo } from '../../../core/repos/extensions';
import { callsRepo } from '../../../core/repos/calls';
import { addBalance, ensureBillingAccount, setRates } from '../../../core/billing';
import { putBinding, aorOf } from '../../../core/registrar/bindings';
import { EMPTY_UUID } from '../../../core/ids';
import { countryOf } from '../../../core/calls/country';
import type { CallStatus } from '../../../core/calls/model';

const NODE = `n${process.pid}`;

describe('calls', function () {
  let t: TestApp;
  let f: Fixture;
  let bus: BusQueues;

  before(async () => {
    t = await startApp();
    bus = await BusQueues.open(t, [ORIGINATE_QUEUE, nodeQueueName(NODE), nodeQueueName('other')]);
  });
  after(async () => {
    setRates(null);
    await bus?.close();
    await stopApp(t);
  });
  beforeEach(async () => {
    bus.clear();
    f = await freshFixture(t);
    setRates({ call_pstn_outgoing: 20_000 });
  });

  const pfx = () => t.ctx.config.redisKeyPrefix;
  const whitelist = (countries: string[], extra: Record<string, unknown> = {}) =>
    t.ctx.repos.outboundConfigs.update(f.outboundConfig.id, { destination_whitelist: countries, ...extra }, { customerId: f.customer.id });
  const fund = async (micros: number) => {
    const acc = await ensureBillingAccount(t.ctx.db, f.customer.id);
    await addBalance(t.ctx.db, acc.id, micros, `t:${acc.id}:${Math.random()}`);
  };
  const number = (n: string, type: 'normal' | 'virtual' = 'normal') => numbersRepo(t.ctx.db).create({ customer_id: f.customer.id, number: n, type });
  const tel = (target: string) => ({ type: 'tel', target });
  const own = async (callId: string, node = NODE) => {
    await t.ctx.redis.set(pfx() + callNodeKey(callId), node);
    await t.ctx.redis.set(pfx() + nodeAliveKey(node), '1', 'PX', 60_000);
  };
  const setStatus = (id: string, status: CallStatus, extra: Record<string, unknown> = {}) =>
    t.ctx
      .db('calls')
      .where({ id })
      .update({ status, ...extra });
  const simpleCall = async () => {
    const r = await api(t, f).post('/calls', {
      source: { type: 'sip', target: 'alice@example.test' },
      destinations: [{ type: 'sip', target: 'sip:bob@example.test:5090' }],
      actions: [{ type: 'answer' }],
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body.calls[0] as { id: string };
  };

  describe('POST /calls', () => {
    it('PSTN call: writes a dialing outgoing Call and enqueues one originate', async () => {
      await whitelist(['us']);
      await number('+14155550100');
      await fund(1_000_000);
      const flow = await api(t, f).post('/flows', { actions: [{ type: 'talk', option: { text: 'hi ${name}' } }] });
      const r = await api(t, f).post('/calls', {
        source: { type: 'tel', target: '+14155550100' },
        destinations: [tel('+12125550199'), { type: 'sip', target: 'sip:bob@example.test' }],
        flow_id: flow.body.id,
        variables: { name: 'Ann', 'svc.call.id': 'spoofed' },
        anonymous: 'yes',
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.groupcalls).to.deep.equal([]);
      expect(r.body.calls).to.have.length(2);
      for (const c of r.body.calls) expect(c).to.include({ status: 'dialing', direction: 'outgoing', type: 'flow', flow_id: flow.body.id, customer_id: f.customer.id });
      expect(r.body.calls[0].destination).to.deep.equal(tel('+12125550199'));
      const rows = await t.ctx.db('calls').whereIn(
        'id',
        r.body.calls.map((c: { id: string }) => c.id),
      );
      expect(rows).to.have.length(2);
      const row = rows.find((x) => x.id === r.body.calls[0].id);
      expect(row!.data.variables).to.deep.equal({ name: 'Ann' });
      expect(row!.data.anonymous).to.equal('yes');
      const jobs = await bus.waitFor(ORIGINATE_QUEUE, 1);
      expect(jobs).to.have.length(1);
      expect(jobs[0]!.command).to.deep.equal({ type: 'call.originate', callIds: r.body.calls.map((c: { id: string }) => c.id), customerId: f.customer.id });
      expect(jobs[0]!.commandId).to.be.a('string');
    });

    it('inline actions become a non-listed flow the call points at', async () => {
      const c = await simpleCall();
      const row = await callsRepo(t.ctx.db).get(c.id);
      const flow = await t.ctx.db('flows').where({ id: row!.flow_id }).first();
      expect(flow!.actions[0].type).to.equal('answer');
      expect((await api(t, f).get('/flows')).body.result).to.deep.equal([]);
    });

    it('rejects a missing flow (404 FLOW_NOT_FOUND), bad actions, and neither flow_id nor actions', async () => {
      const base = { source: { type: 'sip', target: 'a@b.test' }, destinations: [{ type: 'sip', target: 'sip:b@c.test' }] };
      const r = await api(t, f).post('/calls', { ...base, flow_id: '66666666-6666-4666-8666-666666666666' });
      expect(r.status).to.equal(404);
      expect(r.body.error.reason).to.equal('FLOW_NOT_FOUND');
      const other = await createFixture(t.ctx);
      const theirs = await api(t, other).post('/flows', { actions: [] });
      expect((await api(t, f).post('/calls', { ...base, flow_id: theirs.body.id })).body.error.reason).to.equal('FLOW_NOT_FOUND');
      const bad = await api(t, f).post('/calls', { ...base, actions: [{ type: 'sleep', option: { duration: -1 } }] });
      expect(bad.status).to.equal(400);
      expect(bad.body.error.details[0]).to.include({ field: 'actions[0].option.duration', index: 0 });
      const none = await api(t, f).post('/calls', base);
      expect(none.status).to.equal(400);
      expect(Number((await t.ctx.db('calls').count({ n: '*' }))[0]!.n)).to.equal(0);
      expect(bus.seen[ORIGINATE_QUEUE]).to.have.length(0);
    });

    it('rejects bad variables', async () => {
      const base = { source: { type: 'sip', target: 'a@b.test' }, destinations: [{ type: 'sip', target: 'sip:b@c.test' }], actions: [] };
      const notString = await api(t, f).post('/calls', { ...base, variables: { n: 5 } });
      expect(notString.status).to.equal(400);
      expect(notString.body.error.details[0].field).to.equal('variables.n');
      const many: Record<string, string> = {};
      for (let i = 0; i < 101; i++) many[`k${i}`] = 'v';
      expect((await api(t, f).post('/calls', { ...base, variables: many })).body.error.message).to.match(/at most 100 keys/);
      const big = await api(t, f).post('/calls', { ...base, variables: { a: 'x'.repeat(32 * 1024 + 1) } });
      expect(big.status).to.equal(400);
      expect(big.body.error.details[0].field).to.equal('variables.a');
      const total: Record<string, string> = {};
      for (let i = 0; i < 3; i++) total[`k${i}`] = 'x'.repeat(30 * 1024);
      expect((await api(t, f).post('/calls', { ...base, variables: total })).body.error.message).to.match(/64 KB/);
      expect((await api(t, f).post('/calls', { ...base, variables: ['a'] })).status).to.equal(400);
      // svc. keys are dropped silently.
      const ok = await api(t, f).post('/calls', { ...base, variables: { 'svc.x': 'y', keep: 'z' } });
      expect(ok.status).to.equal(200);
      expect((await t.ctx.db('calls').where({ id: ok.body.calls[0].id }).first())!.data.variables).to.deep.equal({ keep: 'z' });
    });

    it('destination whitelist: empty denies all PSTN; other countries denied; virtual numbers exempt', async () => {
      await number('+14155550100');
      await fund(1_000_000);
      const body = (to: string) => ({ source: tel('+14155550100'), destinations: [tel(to)], actions: [] });
      const empty = await api(t, f).post('/calls', body('+12125550199'));
      expect(empty.status).to.equal(403);
      expect(empty.body.error.reason).to.equal('PERMISSION_DENIED');
      expect(empty.body.error.details[0]).to.include({ field: 'destinations[0].target', country: 'us' });
      await whitelist(['us']);
      expect((await api(t, f).post('/calls', body('+12125550199'))).status).to.equal(200);
      const gb = await api(t, f).post('/calls', body('+442079460123'));
      expect(gb.status).to.equal(403);
      expect(gb.body.error.details[0].country).to.equal('gb');
      const ca = await api(t, f).post('/calls', body('+14165550123'));
      expect(ca.body.error.details[0].country).to.equal('ca');
      await number('+899123456789', 'virtual'); // an own virtual number: internal, no whitelist
      expect((await api(t, f).post('/calls', body('+899123456789'))).status).to.equal(200);
      expect((await api(t, f).post('/calls', body('12125550199'))).body.error.details[0].field).to.equal('destinations[0].target');
    });

    it('source-number rules: virtual never a PSTN source, must be own active normal number, default fallback', async () => {
      await whitelist(['us']);
      await fund(1_000_000);
      const v = await number('+899100000001', 'virtual');
      const call = (source: object) => api(t, f).post('/calls', { source, destinations: [tel('+12125550199')], actions: [] });
      const virt = await call(tel(v.number));
      expect(virt.status).to.equal(400);
      expect(virt.body.error.details[0].field).to.equal('source.target');
      expect(virt.body.error.message).to.match(/virtual/);
      expect((await call(tel('+14155550111'))).status).to.equal(400); // not ours
      const other = await createFixture(t.ctx);
      await numbersRepo(t.ctx.db).create({ customer_id: other.customer.id, number: '+14155550122', type: 'normal' });
      expect((await call(tel('+14155550122'))).status).to.equal(400); // someone else's
      // Virtual source to an own virtual (internal) number is fine.
      await number('+899100000002', 'virtual');
      expect((await api(t, f).post('/calls', { source: tel(v.number), destinations: [tel('+899100000002')], actions: [] })).status).to.equal(200);
      // Fallback: the default source number replaces an invalid source.
      const n = await number('+14155550133');
      await whitelist(['us'], { default_outgoing_source_number_id: n.id });
      const fb = await call(tel(v.number));
      expect(fb.status, JSON.stringify(fb.body)).to.equal(200);
      expect(fb.body.calls[0].source).to.include({ type: 'tel', target: '+14155550133' });
    });

    it('402 INSUFFICIENT_BALANCE when the balance cannot pay a minute of every PSTN leg', async () => {
      await whitelist(['us']);
      await number('+14155550100');
      const body = (n: number) => ({ source: tel('+14155550100'), destinations: Array.from({ length: n }, (_, i) => tel(`+1212555010${i}`)), actions: [] });
      const broke = await api(t, f).post('/calls', body(1));
      expect(broke.status).to.equal(402);
      expect(broke.body.error.reason).to.equal('INSUFFICIENT_BALANCE');
      await fund(30_000);
      expect((await api(t, f).post('/calls', body(1))).status).to.equal(200);
      expect((await api(t, f).post('/calls', body(2))).status).to.equal(402);
      // Free destinations need no balance.
      await t.ctx.db('billing_accounts').where({ customer_id: f.customer.id }).update({ balance_credit: 0 });
      await number('+899100000009', 'virtual');
      expect((await api(t, f).post('/calls', { source: tel('+14155550100'), destinations: [tel('+899100000009')], actions: [] })).status).to.equal(200);
    });

    it('extension destinations: unknown → 404, not registered → 409, registered → call', async () => {
      const ext = await extensionsRepo(t.ctx.db).create({
        customer_id: f.customer.id,
        extension: '1001',
        domain_name: 'acme.reg.example.test',
        username: 'u1001',
        password: 'pw',
        direct_hash: `h${Date.now()}`,
      });
      const call = (target_name: string) =>
        api(t, f).post('/calls', { source: { type: 'extension', target: '1000' }, destinations: [{ type: 'extension', target: target_name, target_name }], actions: [] });
      const unknown = await call('1002');
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error.details[0].field).to.equal('destinations[0].target_name');
      const unreg = await call('1001');
      expect(unreg.status).to.equal(409);
      expect(unreg.body.error.message).to.match(/not registered/);
      // An expired binding does not count.
      await putBinding(t.ctx.redis, pfx(), aorOf(ext.username, ext.domain_name), 'sip:u1001@127.0.0.1:5099', Date.now() - 1000);
      expect((await call('1001')).status).to.equal(409);
      await putBinding(t.ctx.redis, pfx(), aorOf(ext.username, ext.domain_name), 'sip:u1001@127.0.0.1:5099', Date.now() + 60_000);
      const ok = await call('1001');
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      expect(ok.body.calls[0].destination).to.include({ type: 'extension', target_name: '1001' });
    });

    it('agent destinations must be agents of the customer; undiallable types and bad bodies are 400', async () => {
      const base = { source: { type: 'sip', target: 'a@b.test' }, actions: [] };
      expect((await api(t, f).post('/calls', { ...base, destinations: [{ type: 'agent', target: f.admin.id }] })).status).to.equal(200);
      const other = await createFixture(t.ctx);
      expect((await api(t, f).post('/calls', { ...base, destinations: [{ type: 'agent', target: other.admin.id }] })).status).to.equal(404);
      const email = await api(t, f).post('/calls', { ...base, destinations: [{ type: 'email', target: 'a@b.test' }] });
      expect(email.status).to.equal(400);
      expect(email.body.error.details[0].field).to.equal('destinations[0].type');
      expect((await api(t, f).post('/calls', { ...base, destinations: [] })).status).to.equal(400);
      expect((await api(t, f).post('/calls', { ...base, destinations: [{ type: 'sip' }] })).body.error.details[0].field).to.equal('destinations.0.target');
      expect((await api(t, f).post('/calls', { ...base, destinations: [{ type: 'sip', target: 'not a uri' }] })).status).to.equal(400);
      expect((await api(t, f).post('/calls', { ...base, destinations: [{ type: 'sip', target: 'sip:x@y.test' }], anonymous: 'maybe' })).status).to.equal(400);
    });

    it('country table', () => {
      expect(countryOf('+14155550100')).to.equal('us');
      expect(countryOf('+16045550100')).to.equal('ca');
      expect(countryOf('+18765550100')).to.equal('jm');
      expect(countryOf('+447700900123')).to.equal('gb');
      expect(countryOf('+33123456789')).to.equal('fr');
      expect(countryOf('+77012345678')).to.equal('kz');
      expect(countryOf('+74951234567')).to.equal('ru');
      expect(countryOf('+8612345678901')).to.equal('cn');
      expect(countryOf('+999123456')).to.equal(null);
    });
  });

  describe('GET, DELETE and commands on a call', () => {
    it('GET /calls and /calls/{id}; other customers get CALL_NOT_FOUND', async () => {
      const c = await simpleCall();
      const g = await api(t, f).get(`/calls/${c.id}`);
      expect(g.status).to.equal(200);
      expect(g.body).to.include({ id: c.id, status: 'dialing', recording_id: EMPTY_UUID, tm_hangup: null });
      expect((await api(t, f).get('/calls')).body.result.map((x: { id: string }) => x.id)).to.deep.equal([c.id]);
      const other = await createFixture(t.ctx);
      const o = await api(t, other).get(`/calls/${c.id}`);
      expect(o.status).to.equal(404);
      expect(o.body.error.reason).to.equal('CALL_NOT_FOUND');
      expect((await api(t, other).post(`/calls/${c.id}/hangup`)).body.error.reason).to.equal('CALL_NOT_FOUND');
    });

    it('hangup goes to the owner node queue; an ended call is CALL_ALREADY_HANGUP', async () => {
      const c = await simpleCall();
      await setStatus(c.id, 'progressing', { node_id: NODE });
      await own(c.id);
      const r = await api(t, f).post(`/calls/${c.id}/hangup`);
      expect(r.status).to.equal(200);
      const jobs = await bus.waitFor(nodeQueueName(NODE), 1);
      expect(jobs.map((j) => j.command)).to.deep.equal([{ type: 'call.hangup', callId: c.id }]);
      expect(bus.seen[nodeQueueName('other')]).to.have.length(0);
      await setStatus(c.id, 'hangup');
      const again = await api(t, f).post(`/calls/${c.id}/hangup`);
      expect(again.status).to.equal(409);
      expect(again.body.error.reason).to.equal('CALL_ALREADY_HANGUP');
    });

    it('routes to the node that owns the call, and a dead owner is CALL_NOT_FOUND', async () => {
      const c = await simpleCall();
      await setStatus(c.id, 'progressing', { node_id: 'other' });
      await own(c.id, 'other');
      expect((await api(t, f).post(`/calls/${c.id}/mute`, { direction: 'in' })).status).to.equal(200);
      const jobs = await bus.waitFor(nodeQueueName('other'), 1);
      expect(jobs[0]!.command).to.deep.equal({ type: 'call.mute', callId: c.id, direction: 'in', on: true });
      expect(bus.seen[nodeQueueName(NODE)]).to.have.length(0);
      await t.ctx.redis.del(pfx() + nodeAliveKey('other'));
      const dead = await api(t, f).post(`/calls/${c.id}/hangup`);
      expect(dead.status).to.equal(404);
      expect(dead.body.error.reason).to.equal('CALL_NOT_FOUND');
    });

    it('hangup of a call whose originate was not picked up cancels it in place', async () => {
      const c = await simpleCall();
      const r = await api(t, f).post(`/calls/${c.id}/hangup`);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body).to.include({ status: 'hangup', hangup_by: 'local', hangup_reason: 'cancel' });
    });

    it('mute/unmute need a progressing call; DELETE /mute sends on=false with the direction', async () => {
      const c = await simpleCall();
      await own(c.id);
      const early = await api(t, f).post(`/calls/${c.id}/mute`, { direction: 'both' });
      expect(early.status).to.equal(409);
      expect(early.body.error.reason).to.equal('CALL_STATE_INVALID');
      await setStatus(c.id, 'progressing');
      expect((await api(t, f).post(`/calls/${c.id}/mute`, { direction: 'sideways' })).status).to.equal(400);
      expect((await api(t, f).del(`/calls/${c.id}/mute`, { direction: 'out' })).status).to.equal(200);
      const jobs = await bus.waitFor(nodeQueueName(NODE), 1);
      expect(jobs[0]!.command).to.deep.equal({ type: 'call.mute', callId: c.id, direction: 'out', on: false });
    });

    it('recording start/stop under both spellings, with their state errors', async () => {
      const c = await simpleCall();
      await own(c.id);
      expect((await api(t, f).post(`/calls/${c.id}/recording_start`, {})).body.error.reason).to.equal('CALL_STATE_INVALID');
      await setStatus(c.id, 'progressing');
      const s = await api(t, f).post(`/calls/${c.id}/recording-start`, { duration: 30, end_of_key: '#' });
      expect(s.status, JSON.stringify(s.body)).to.equal(200);
      const jobs = await bus.waitFor(nodeQueueName(NODE), 1);
      const cmd = jobs[0]!.command as { type: string; recordingId: string; options: object };
      expect(cmd.type).to.equal('call.recording_start');
      expect(cmd.options).to.deep.equal({ format: 'wav', end_of_silence: 0, end_of_key: '#', duration: 30, on_end_flow_id: EMPTY_UUID });
      expect((await api(t, f).post(`/calls/${c.id}/recording_stop`)).body.error.reason).to.equal('RECORDING_NOT_ACTIVE');
      expect((await api(t, f).post(`/calls/${c.id}/recording-stop`)).body.error.reason).to.equal('RECORDING_NOT_ACTIVE');
      // media-app reports the recording as active.
      await callsRepo(t.ctx.db).setRecording(c.id, cmd.recordingId, true);
      expect((await api(t, f).post(`/calls/${c.id}/recording_start`, {})).body.error.reason).to.equal('RECORDING_ALREADY_ACTIVE');
      expect((await api(t, f).post(`/calls/${c.id}/recording-start`, {})).body.error.reason).to.equal('RECORDING_ALREADY_ACTIVE');
      expect((await api(t, f).post(`/calls/${c.id}/recording_stop`)).status).to.equal(200);
      const stops = await bus.waitFor(nodeQueueName(NODE), 2);
      expect(stops[1]!.command).to.deep.equal({ type: 'call.recording_stop', callId: c.id });
      await callsRepo(t.ctx.db).setRecording(c.id, cmd.recordingId, false);
      const noFlow = await api(t, f).post(`/calls/${c.id}/recording_start`, { on_end_flow_id: '77777777-7777-4777-8777-777777777777' });
      expect(noFlow.status).to.equal(404);
      expect(noFlow.body.error.reason).to.equal('FLOW_NOT_FOUND');
      await setStatus(c.id, 'hangup');
      expect((await api(t, f).post(`/calls/${c.id}/recording_start`, {})).body.error.reason).to.equal('CALL_ALREADY_HANGUP');
      expect((await api(t, f).post(`/calls/${c.id}/recording_stop`)).body.error.reason).to.equal('CALL_ALREADY_HANGUP');
    });

    it('DELETE needs an ended call and is soft', async () => {
      const c = await simpleCall();
      const live = await api(t, f).del(`/calls/${c.id}`);
      expect(live.status).to.equal(409);
      expect(live.body.error.reason).to.equal('CALL_STATE_INVALID');
      await setStatus(c.id, 'hangup');
      const d = await api(t, f).del(`/calls/${c.id}`);
      expect(d.status).to.equal(200);
      expect(d.body.tm_delete).to.be.a('string');
      expect((await api(t, f).get(`/calls/${c.id}`)).status).to.equal(404);
    });
  });
});
