// Groupcalls end to end: POST /groupcalls on the control-api, groupcall.start over BullMQ, a media-app
// node ringing sipp UASes through sip-server. ring_all: the first answer wins and the others get
// CANCEL; linear: one destination after another.
import { expect } from 'chai';
import { callsRepo } from '../../core/repos/calls';
import { groupcallsRepo } from '../../core/repos/groupcalls';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { answeringUas, createExtension, eventsFor, killAllSipp, sipp, until } from '../../testkit/media-app/harness';
import { cancelledUas, registerOnly, startStack, type Stack } from './support';

describe('groupcalls', function () {
  this.timeout(90_000);
  let s: Stack;

  before(async () => {
    s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
  });
  after(async () => {
    killAllSipp();
    await s?.close();
  });

  const hangupFlow = [{ type: 'sleep', option: { duration: 300 } }, { type: 'hangup' }];
  const ended = (id: string) =>
    until(
      async () => {
        const g = await groupcallsRepo(s.t.ctx.db).get(id);
        return g?.status === 'hangup' ? g : null;
      },
      20_000,
      'groupcall hangup',
    );

  it('ring_all: the first to answer runs the flow, the others are cancelled', async () => {
    const [p1, p2, p3] = [await freePort(), await freePort(), await freePort()];
    const answering = sipp(answeringUas({ pauseMs: 700 }), ['-i', '127.0.0.1', '-p', String(p1), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
    const c2 = sipp(cancelledUas(), ['-i', '127.0.0.1', '-p', String(p2), '-m', '1']);
    const c3 = sipp(cancelledUas(), ['-i', '127.0.0.1', '-p', String(p3), '-m', '1']);
    await new Promise((r) => setTimeout(r, 300));
    const res = await s.api.post('/groupcalls', {
      source: { type: 'tel', target: '+899100000001' },
      destinations: [1, 2, 3].map((i) => ({ type: 'sip', target: `d${i}@127.0.0.1:${[p1, p2, p3][i - 1]}` })),
      actions: hangupFlow,
      ring_method: 'ring_all',
      answer_method: 'hangup_others',
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.include({ status: 'progressing', ring_method: 'ring_all', answer_method: 'hangup_others', call_count: 3 });
    expect(res.body.call_ids).to.have.length(3);
    const [a, b, c] = await Promise.all([answering.done, c2.done, c3.done]);
    for (const r of [a, b, c]) expect(r.code, r.errors + r.messages).to.equal(0);
    const g = await ended(res.body.id);
    expect(g.answer_call_id).to.equal(res.body.call_ids[0]);
    const calls = await Promise.all(
      g.call_ids.map((id) =>
        until(
          async () => {
            const c = await callsRepo(s.t.ctx.db).get(id);
            return c?.status === 'hangup' ? c : null;
          },
          10_000,
          'call hangup',
        ),
      ),
    );
    expect(calls[0]!.tm_progressing).to.be.instanceOf(Date);
    expect(calls[0]!.groupcall_id).to.equal(g.id);
    for (const c of calls.slice(1)) expect(c).to.include({ hangup_reason: 'cancel', hangup_by: 'local' });
    const events = (await eventsFor(s.p.redis, g.id)).map((e) => e.event_type);
    expect(events).to.deep.equal(['groupcall_created', 'groupcall_progressing', 'groupcall_hangup']);
    const got = await s.api.get(`/groupcalls/${g.id}`);
    expect(got.status).to.equal(200);
    expect(got.body).to.include({ status: 'hangup', answer_call_id: calls[0]!.id });
  });

  it('linear: tries in order; after an answer the rest are never dialled', async () => {
    const [p1, p2, p3] = [await freePort(), await freePort(), await freePort()];
    const busy = sipp(answeringUas({ final: 486 }), ['-i', '127.0.0.1', '-p', String(p1), '-m', '1']);
    const answering = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(p2), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
    await new Promise((r) => setTimeout(r, 300));
    const res = await s.api.post('/groupcalls', {
      source: { type: 'tel', target: '+899100000001' },
      destinations: [p1, p2, p3].map((p, i) => ({ type: 'sip', target: `l${i}@127.0.0.1:${p}` })),
      actions: hangupFlow,
      ring_method: 'linear',
      answer_method: 'hangup_others',
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const [b, a] = await Promise.all([busy.done, answering.done]);
    expect(b.code, b.errors).to.equal(0);
    expect(a.code, a.errors + a.messages).to.equal(0);
    const g = await ended(res.body.id);
    expect(g.answer_call_id).to.equal(res.body.call_ids[1]);
    const [first, second, third] = await Promise.all(g.call_ids.map((id) => callsRepo(s.t.ctx.db).get(id)));
    expect(first).to.include({ status: 'hangup', hangup_reason: 'busy' });
    expect(second!.tm_create.getTime()).to.be.at.most(first!.tm_hangup!.getTime());
    expect(second!.tm_progressing!.getTime()).to.be.at.least(first!.tm_hangup!.getTime());
    expect(third).to.include({ status: 'hangup', hangup_reason: 'cancel' });
    expect(third!.tm_ringing).to.equal(null);
  });

  it('hangup of a ringing groupcall cancels every call; list, errors', async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const c1 = sipp(cancelledUas(), ['-i', '127.0.0.1', '-p', String(p1), '-m', '1']);
    const c2 = sipp(cancelledUas(), ['-i', '127.0.0.1', '-p', String(p2), '-m', '1']);
    await new Promise((r) => setTimeout(r, 300));
    const res = await s.api.post('/groupcalls', {
      source: { type: 'tel', target: '+899100000001' },
      destinations: [p1, p2].map((p, i) => ({ type: 'sip', target: `h${i}@127.0.0.1:${p}` })),
      actions: hangupFlow,
      ring_method: '',
      answer_method: '',
    });
    expect(res.status).to.equal(200);
    await until(
      async () => {
        const rows = await Promise.all(res.body.call_ids.map((id: string) => callsRepo(s.t.ctx.db).get(id)));
        return rows.every((r) => r?.status === 'ringing');
      },
      10_000,
      'both ringing',
    );
    const h = await s.api.post(`/groupcalls/${res.body.id}/hangup`, undefined);
    expect(h.status, JSON.stringify(h.body)).to.equal(200);
    for (const r of await Promise.all([c1.done, c2.done])) expect(r.code, r.errors).to.equal(0);
    const g = await ended(res.body.id);
    expect(g.answer_call_id).to.equal('00000000-0000-0000-0000-000000000000');
    expect((await s.api.post(`/groupcalls/${g.id}/hangup`, undefined)).status).to.equal(409);
    const list = await s.api.get('/groupcalls');
    expect(list.status).to.equal(200);
    expect(list.body.result.map((x: { id: string }) => x.id)).to.include(g.id);
    const del = await s.t.ctx.db('groupcalls').where({ id: g.id }).first();
    expect(del!.tm_delete).to.equal(null);
  });

  it('POST /calls: an extension destination rings as a groupcall around its call', async () => {
    const b = await createExtension(s.f.customer.id);
    const server = `127.0.0.1:${s.p.sipPort}`;
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(b.ext.username, b.domain), [server, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', b.ext.username, '-ap', b.password]).done;
    expect(reg.code, reg.errors).to.equal(0);
    const phone = sipp(
      answeringUas({ contact: `<sip:${b.ext.username}@[local_ip]:[local_port]>`, inviteTimeoutMs: 20000 }),
      ['-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { killAfterMs: 40_000 },
    );
    await new Promise((r) => setTimeout(r, 300));
    const res = await s.api.post('/calls', {
      source: { type: 'tel', target: '+899100000001' },
      destinations: [{ type: 'extension', target: b.ext.extension, target_name: b.ext.extension }],
      actions: hangupFlow,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.calls).to.have.length(1);
    expect(res.body.groupcalls).to.have.length(1);
    const gc = res.body.groupcalls[0];
    expect(gc).to.include({ ring_method: 'ring_all', answer_method: 'hangup_others', status: 'progressing' });
    expect(gc.call_ids).to.deep.equal([res.body.calls[0].id]);
    expect(res.body.calls[0].groupcall_id).to.equal(gc.id);
    const r = await phone.done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const g = await ended(gc.id);
    expect(g.answer_call_id).to.equal(res.body.calls[0].id);
  });

  it('POST /calls: an agent destination rings the agent at its addresses; an agent with none fails its call', async () => {
    const b = await createExtension(s.f.customer.id);
    const server = `127.0.0.1:${s.p.sipPort}`;
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(b.ext.username, b.domain), [server, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', b.ext.username, '-ap', b.password]).done;
    expect(reg.code, reg.errors).to.equal(0);
    const reachable = await s.t.ctx.repos.agents.create({
      customer_id: s.f.customer.id,
      username: `agent-${Date.now()}@example.test`,
      password: 'pw-agent-dest-1',
      permission: 1,
      addresses: [{ type: 'extension', target: b.ext.extension, target_name: b.ext.extension }],
    } as never);
    const phone = sipp(
      answeringUas({ contact: `<sip:${b.ext.username}@[local_ip]:[local_port]>`, inviteTimeoutMs: 20000 }),
      ['-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { killAfterMs: 40_000 },
    );
    await new Promise((r) => setTimeout(r, 300));
    const res = await s.api.post('/calls', { source: { type: 'tel', target: '+899100000001' }, destinations: [{ type: 'agent', target: reachable.id }], actions: hangupFlow });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.groupcalls).to.have.length(1);
    const r = await phone.done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect((await ended(res.body.groupcalls[0].id)).answer_call_id).to.equal(res.body.calls[0].id);

    const unreachable = await s.t.ctx.repos.agents.create({
      customer_id: s.f.customer.id,
      username: `agent-none-${Date.now()}@example.test`,
      password: 'pw-agent-dest-2',
      permission: 1,
      addresses: [],
    } as never);
    const none = await s.api.post('/calls', { source: { type: 'tel', target: '+899100000001' }, destinations: [{ type: 'agent', target: unreachable.id }], actions: hangupFlow });
    expect(none.status, JSON.stringify(none.body)).to.equal(200);
    expect((await ended(none.body.groupcalls[0].id)).answer_call_id).to.equal('00000000-0000-0000-0000-000000000000');
    const call = await until(
      async () => {
        const c = await callsRepo(s.t.ctx.db).get(none.body.calls[0].id);
        return c?.status === 'hangup' ? c : null;
      },
      20_000,
      'agent call ended',
    );
    expect(call.hangup_reason).to.equal('failed');
  });

  it('bad input: unknown id, bad ring method, bad destination, no flow', async () => {
    const unknown = await s.api.get('/groupcalls/6f1d0a52-9a57-4d39-9b8e-0d4f7f0b0c11');
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error?.reason ?? unknown.body.reason ?? JSON.stringify(unknown.body)).to.include('GROUPCALL_NOT_FOUND');
    const base = { source: { type: 'tel', target: '+899100000001' }, destinations: [{ type: 'sip', target: 'x@127.0.0.1:5999' }], actions: hangupFlow, answer_method: '' };
    expect((await s.api.post('/groupcalls', { ...base, ring_method: 'round_robin' })).status).to.equal(400);
    expect((await s.api.post('/groupcalls', { ...base, ring_method: 'linear', destinations: [{ type: 'sip', target: 'not a uri' }] })).status).to.equal(400);
    expect((await s.api.post('/groupcalls', { ...base, ring_method: 'linear', destinations: [] })).status).to.equal(400);
    expect((await s.api.post('/groupcalls', { ...base, ring_method: 'linear', actions: undefined })).status).to.equal(400);
    expect((await s.api.get('/groupcalls/not-a-uuid')).status).to.equal(400);
  });
});
