import { expect } from 'chai';
import request from 'supertest';
import { callsRepo } from '../../core/repos/calls';
import { conversationsRepo } from '../../core/repos/conversations';
import { newId } from '../../core/ids';
import { conversationFor, expectError, type Rig, type Team, bearer, useRig } from './support';

describe('service-agent API: scope, me, calls, conversations', function () {
  this.timeout(60_000);
  let rig: Rig;
  let tm: Team;
  useRig((r, t) => ((rig = r), (tm = t)));

  async function callOf(ownerId: string, viaAddress = false) {
    return callsRepo(rig.t.ctx.db).create({
      customer_id: tm.f.customer.id,
      source: { type: 'tel', target: '+15551230000' },
      destination: viaAddress ? { type: 'agent', target: ownerId } : { type: 'tel', target: '+15551239999' },
      direction: 'incoming',
      ...(viaAddress ? {} : { owner_type: 'agent', owner_id: ownerId }),
    });
  }

  it('an agent sees its own calls (owned or addressed to it) and gets 404 for another agent’s', async () => {
    const own = await callOf(tm.a.id);
    const addressed = await callOf(tm.a.id, true);
    const other = await callOf(tm.b.id);
    const list = await request(rig.t.app).get('/v1.0/service_agents/calls').set(bearer(tm.a.token));
    expect(list.status).to.equal(200);
    const ids = list.body.result.map((c: { id: string }) => c.id);
    expect(ids).to.have.members([own.id, addressed.id]);
    expect((await request(rig.t.app).get(`/v1.0/service_agents/calls/${own.id}`).set(bearer(tm.a.token))).body.id).to.equal(own.id);
    expectError(await request(rig.t.app).get(`/v1.0/service_agents/calls/${other.id}`).set(bearer(tm.a.token)), 404, 'CALL_NOT_FOUND');
    // The spec's hyphenated spelling serves the same routes.
    expect((await request(rig.t.app).get(`/v1.0/service-agents/calls/${other.id}`).set(bearer(tm.b.token))).body.id).to.equal(other.id);
    expectError(await request(rig.t.app).get(`/v1.0/service_agents/calls/not-a-uuid`).set(bearer(tm.a.token)), 400, 'INVALID_ID');
  });

  it('an agent sees its own conversations and their messages, 404 for another agent’s, and loses one it unassigns', async () => {
    const mine = await conversationFor(rig, tm.f.customer.id, tm.a.id);
    const theirs = await conversationFor(rig, tm.f.customer.id, tm.b.id);
    const unowned = await conversationFor(rig, tm.f.customer.id, null);
    await conversationsRepo(rig.t.ctx.db).addMessage({
      customer_id: tm.f.customer.id,
      conversation_id: mine.id,
      direction: 'incoming',
      status: 'done',
      reference_type: 'message',
      reference_id: newId(),
      source: mine.peer,
      destination: mine.self,
      text: 'hello agent',
    });
    const list = await request(rig.t.app).get('/v1.0/service_agents/conversations').set(bearer(tm.a.token));
    expect(list.body.result.map((c: { id: string }) => c.id)).to.deep.equal([mine.id]);
    const msgs = await request(rig.t.app).get(`/v1.0/service-agents/conversations/${mine.id}/messages`).set(bearer(tm.a.token));
    expect(msgs.body.result.map((m: { text: string }) => m.text)).to.deep.equal(['hello agent']);
    for (const id of [theirs.id, unowned.id]) {
      expectError(await request(rig.t.app).get(`/v1.0/service_agents/conversations/${id}`).set(bearer(tm.a.token)), 404, 'CONVERSATION_NOT_FOUND');
      expectError(await request(rig.t.app).get(`/v1.0/service_agents/conversations/${id}/messages`).set(bearer(tm.a.token)), 404, 'CONVERSATION_NOT_FOUND');
      expectError(await request(rig.t.app).post(`/v1.0/service_agents/conversations/${id}/unassign`).set(bearer(tm.a.token)), 404, 'CONVERSATION_NOT_FOUND');
      expectError(await request(rig.t.app).post(`/v1.0/service_agents/conversations/${id}/messages`).set(bearer(tm.a.token)).send({ text: 'x' }), 404, 'CONVERSATION_NOT_FOUND');
    }
    expectError(await request(rig.t.app).post(`/v1.0/service_agents/conversations/${mine.id}/messages`).set(bearer(tm.a.token)).send({}), 400, 'INVALID_ARGUMENT');
    expectError(await request(rig.t.app).put(`/v1.0/service_agents/conversations/${mine.id}`).set(bearer(tm.a.token)).send({ owner_id: newId() }), 400, 'INVALID_ARGUMENT');
    const renamed = await request(rig.t.app).put(`/v1.0/service_agents/conversations/${mine.id}`).set(bearer(tm.a.token)).send({ name: 'VIP' });
    expect(renamed.body.name).to.equal('VIP');
    const un = await request(rig.t.app).post(`/v1.0/service_agents/conversations/${mine.id}/unassign`).set(bearer(tm.a.token));
    expect(un.status).to.equal(200);
    expect(un.body.owner_id).to.equal('00000000-0000-0000-0000-000000000000');
    expectError(await request(rig.t.app).get(`/v1.0/service_agents/conversations/${mine.id}`).set(bearer(tm.a.token)), 404, 'CONVERSATION_NOT_FOUND');
  });

  it('me: profile, status, addresses and password, with bad input refused', async () => {
    const me = await request(rig.t.app).get('/v1.0/service_agents/me').set(bearer(tm.a.token));
    expect(me.body.id).to.equal(tm.a.id);
    expect(me.body).to.not.have.property('password_hash');
    const st = await request(rig.t.app).put('/v1.0/service_agents/me/status').set(bearer(tm.a.token)).send({ status: 'available' });
    expect(st.body.status).to.equal('available');
    expectError(await request(rig.t.app).put('/v1.0/service_agents/me/status').set(bearer(tm.a.token)).send({ status: 'asleep' }), 400, 'INVALID_ARGUMENT');
    expectError(await request(rig.t.app).put('/v1.0/service_agents/me/status').set(bearer(tm.a.token)).send({ status: 'ringing' }), 400, 'INVALID_ARGUMENT');
    const ad = await request(rig.t.app)
      .put('/v1.0/service_agents/me/addresses')
      .set(bearer(tm.a.token))
      .send({ addresses: [{ type: 'extension', target: '2001' }] });
    expect(ad.body.addresses).to.deep.equal([{ type: 'extension', target: '2001' }]);
    expectError(
      await request(rig.t.app)
        .put('/v1.0/service_agents/me/addresses')
        .set(bearer(tm.a.token))
        .send({ addresses: [{ type: 'pigeon', target: 'x' }] }),
      400,
      'INVALID_ARGUMENT',
    );
    expectError(await request(rig.t.app).put('/v1.0/service_agents/me/password').set(bearer(tm.a.token)).send({ password: 'short' }), 400, 'INVALID_ARGUMENT');
    expect((await request(rig.t.app).put('/v1.0/service_agents/me/password').set(bearer(tm.a.token)).send({ password: 'a-long-password' })).status).to.equal(200);
    const login = await request(rig.t.app).post('/auth/login').send({ username: me.body.username, password: 'a-long-password' });
    expect(login.status).to.equal(200);
    // the new password ended the agent's older sessions (docs/security.md "Sessions"): go on with the new login
    expectError(await request(rig.t.app).get('/v1.0/service_agents/me').set(bearer(tm.a.token)), 401, 'INVALID_CREDENTIALS');
    tm.a.token = login.body.token as string;
    const upd = await request(rig.t.app).put('/v1.0/service_agents/me').set(bearer(tm.a.token)).send({ name: 'Ann', ring_method: 'linear' });
    expect(upd.body).to.include({ name: 'Ann', ring_method: 'linear' });
    expectError(await request(rig.t.app).put('/v1.0/service_agents/me').set(bearer(tm.a.token)).send({ username: 'x' }), 400, 'INVALID_ARGUMENT');
    expectError(await request(rig.t.app).put('/v1.0/service_agents/me').set(bearer(tm.a.token)).set('Content-Type', 'application/json').send('{bad'), 400, 'INVALID_JSON_BODY');
  });

  it('needs an agent login: accesskeys get DIRECT_ACCESS_NOT_SUPPORTED, no credentials 401', async () => {
    expectError(await request(rig.t.app).get('/v1.0/service_agents/me').query({ accesskey: tm.f.accesskey }), 403, 'DIRECT_ACCESS_NOT_SUPPORTED');
    expectError(await request(rig.t.app).get('/v1.0/service_agents/calls'), 401, 'AUTHENTICATION_REQUIRED');
  });
  it('shared reads: tags and contacts of the customer, the agent’s own extensions, transcripts of its calls only', async () => {
    const a = bearer(tm.a.token);
    const q = { accesskey: tm.f.accesskey };
    const tag = await request(rig.t.app)
      .post('/v1.0/tags')
      .query(q)
      .send({ name: `vip-${newId().slice(0, 8)}` });
    expect((await request(rig.t.app).get(`/v1.0/service_agents/tags/${tag.body.id}`).set(a)).body.id).to.equal(tag.body.id);
    await request(rig.t.app)
      .post('/v1.0/contacts')
      .query(q)
      .send({ first_name: 'Zed', addresses: [{ type: 'tel', target: '+15557770000' }] });
    expect((await request(rig.t.app).get('/v1.0/service_agents/contacts/lookup').query({ phone: '+15557770000' }).set(a)).body.first_name).to.equal('Zed');
    expectError(await request(rig.t.app).get('/v1.0/service_agents/contacts/lookup').set(a), 400, 'INVALID_ARGUMENT');
    expectError(await request(rig.t.app).get('/v1.0/service_agents/contacts/lookup').query({ phone: '5557770000' }).set(a), 400, 'INVALID_REQUEST_PARAMETER');
    expect((await request(rig.t.app).get('/v1.0/service_agents/extensions').set(a)).body.result).to.deep.equal([]);
    // A transcribe of b's call is invisible to a.
    const call = await callOf(tm.b.id);
    const tid = newId();
    await rig.t.ctx
      .db('transcribes')
      .insert({ id: tid, customer_id: tm.f.customer.id, activeflow_id: newId(), on_end_flow_id: newId(), reference_type: 'call', reference_id: call.id, status: 'done', tm_create: new Date() });
    expect((await request(rig.t.app).get('/v1.0/service_agents/transcribes').set(bearer(tm.b.token))).body.result.map((t: { id: string }) => t.id)).to.deep.equal([tid]);
    expect((await request(rig.t.app).get('/v1.0/service_agents/transcribes').set(a)).body.result).to.deep.equal([]);
    expectError(await request(rig.t.app).get('/v1.0/service_agents/transcripts').query({ transcribe_id: tid }).set(a), 404, 'RESOURCE_NOT_FOUND');
    expect((await request(rig.t.app).get('/v1.0/service_agents/transcripts').query({ transcribe_id: tid }).set(bearer(tm.b.token))).status).to.equal(200);
    expectError(await request(rig.t.app).get('/v1.0/service_agents/transcripts').set(a), 400, 'MISSING_REQUEST_PARAMETER');
  });
});
