import { expect } from 'chai';
import request from 'supertest';
import { createAgent } from '../../testkit/api';
import { Permission } from '../../core/permissions';
import { newId } from '../../core/ids';
import { startRig, team, expectError, type Rig, type Team } from './support';

describe('agent chats: talk channels, chats, participants, messages, reactions', function () {
  this.timeout(60_000);
  let rig: Rig;
  let tm: Team;
  const as = (token: string) => ({ Authorization: `Bearer ${token}` });

  before(async () => {
    rig = await startRig();
    tm = await team(rig);
  });
  after(async () => rig.close());

  it('a direct chat is seen only by its two members; messages, threads and reactions work; bad input refused', async () => {
    const c = await createAgent(rig.t.ctx, tm.f.customer.id, Permission.CustomerAgent);
    const a = as(tm.a.token);
    const chat = await request(rig.t.app)
      .post('/v1.0/service_agents/talk_chats')
      .set(a)
      .send({ type: 'direct', participants: [{ owner_type: 'agent', owner_id: tm.b.id }] });
    expect(chat.status, JSON.stringify(chat.body)).to.equal(200);
    expect(chat.body).to.include({ type: 'direct', member_count: 2 });
    expectError(await request(rig.t.app).post('/v1.0/service_agents/talk_chats').set(a).send({ type: 'direct', participants: [] }), 400, 'INVALID_ARGUMENT');
    expectError(
      await request(rig.t.app)
        .post('/v1.0/service_agents/talk_chats')
        .set(a)
        .send({ type: 'group', participants: [{ owner_type: 'agent', owner_id: newId() }] }),
      400,
      'INVALID_ARGUMENT',
    );
    expectError(await request(rig.t.app).post('/v1.0/service_agents/talk_chats').set(a).send({ type: 'party' }), 400, 'INVALID_ARGUMENT');

    const m = await request(rig.t.app).post('/v1.0/service_agents/talk_messages').set(as(tm.b.token)).send({ chat_id: chat.body.id, text: 'lunch?' });
    expect(m.body).to.include({ owner_id: tm.b.id, text: 'lunch?', type: 'normal' });
    const reply = await request(rig.t.app).post('/v1.0/service_agents/talk_messages').set(a).send({ chat_id: chat.body.id, text: 'yes', parent_id: m.body.id });
    expect(reply.body.parent_id).to.equal(m.body.id);
    const r1 = await request(rig.t.app).post(`/v1.0/service_agents/talk_messages/${m.body.id}/reactions`).set(a).send({ emoji: '👍' });
    await request(rig.t.app).post(`/v1.0/service_agents/talk_messages/${m.body.id}/reactions`).set(a).send({ emoji: '👍' });
    expect(r1.body.metadata.reactions.map((r: { emoji: string; owner_id: string }) => `${r.emoji}${r.owner_id}`)).to.deep.equal([`👍${tm.a.id}`]);
    const again = await request(rig.t.app).get(`/v1.0/service_agents/talk_messages/${m.body.id}`).set(a);
    expect(again.body.metadata.reactions).to.have.length(1);
    const list = await request(rig.t.app).get('/v1.0/service_agents/talk_messages').query({ chat_id: chat.body.id }).set(a);
    expect(list.body.result.map((x: { text: string }) => x.text)).to.deep.equal(['yes', 'lunch?']);

    // The third agent sees nothing of it.
    const o = as(c.token);
    expectError(await request(rig.t.app).get(`/v1.0/service_agents/talk_chats/${chat.body.id}`).set(o), 404, 'RESOURCE_NOT_FOUND');
    expectError(await request(rig.t.app).get('/v1.0/service_agents/talk_messages').query({ chat_id: chat.body.id }).set(o), 404, 'RESOURCE_NOT_FOUND');
    expectError(await request(rig.t.app).get(`/v1.0/service_agents/talk_messages/${m.body.id}`).set(o), 404, 'MESSAGE_NOT_FOUND');
    expectError(await request(rig.t.app).post('/v1.0/service_agents/talk_messages').set(o).send({ chat_id: chat.body.id, text: 'hi' }), 404, 'RESOURCE_NOT_FOUND');
    expect((await request(rig.t.app).get('/v1.0/service_agents/talk_chats').set(o)).body.result).to.have.length(0);
    expectError(await request(rig.t.app).get('/v1.0/service_agents/talk_messages').set(a), 400, 'MISSING_REQUEST_PARAMETER');
    expectError(await request(rig.t.app).post(`/v1.0/service_agents/talk_chats/${chat.body.id}/participants`).set(a).send({ owner_type: 'agent', owner_id: c.agent.id }), 409, 'STATE_INVALID');
    // Only one's own message can be deleted.
    expectError(await request(rig.t.app).delete(`/v1.0/service_agents/talk_messages/${m.body.id}`).set(a), 404, 'MESSAGE_NOT_FOUND');
    expect((await request(rig.t.app).delete(`/v1.0/service_agents/talk_messages/${reply.body.id}`).set(a)).status).to.equal(200);
  });

  it('a public channel is listed for every agent, who may join once', async () => {
    const ch = await request(rig.t.app).post('/v1.0/service_agents/talk_chats').set(as(tm.a.token)).send({ type: 'talk', name: 'general' });
    const channels = await request(rig.t.app).get('/v1.0/service-agents/talk_channels').set(as(tm.b.token));
    expect(channels.body.result.map((x: { id: string }) => x.id)).to.include(ch.body.id);
    const join = await request(rig.t.app).post(`/v1.0/service_agents/talk_chats/${ch.body.id}/join`).set(as(tm.b.token));
    expect(join.body).to.include({ owner_id: tm.b.id, chat_id: ch.body.id });
    expectError(await request(rig.t.app).post(`/v1.0/service_agents/talk_chats/${ch.body.id}/join`).set(as(tm.b.token)), 409, 'ALREADY_EXISTS');
    const members = await request(rig.t.app).get(`/v1.0/service_agents/talk_chats/${ch.body.id}/participants`).set(as(tm.b.token));
    expect(members.body.map((p: { owner_id: string }) => p.owner_id)).to.have.members([tm.a.id, tm.b.id]);
    const left = await request(rig.t.app).delete(`/v1.0/service_agents/talk_chats/${ch.body.id}/participants/${join.body.id}`).set(as(tm.b.token));
    expect(left.status).to.equal(200);
    expectError(await request(rig.t.app).put(`/v1.0/service_agents/talk_chats/${ch.body.id}`).set(as(tm.b.token)).send({ name: 'x' }), 404, 'RESOURCE_NOT_FOUND');
  });
});
