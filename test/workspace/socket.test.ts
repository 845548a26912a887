import { expect } from 'chai';
import request from 'supertest';
import { connect, settle } from '../control-api/events/support';
import { publishResourceEvent } from '../../core/events/catalogue';
import { conversationJson, conversationMessageJson, conversationsRepo, type ConversationRow } from '../../core/repos/conversations';
import { newId } from '../../core/ids';
import { startRig, team, conversationFor, type Rig, type Team } from './support';

describe('agent WebSocket /v1.0/service_agents/ws', function () {
  this.timeout(60_000);
  let rig: Rig;
  let tm: Team;

  before(async () => {
    rig = await startRig();
    tm = await team(rig);
  });
  after(async () => rig.close());

  async function message(c: ConversationRow, text: string) {
    const m = await conversationsRepo(rig.t.ctx.db).addMessage({
      customer_id: c.customer_id,
      conversation_id: c.id,
      direction: 'incoming',
      status: 'done',
      reference_type: 'message',
      reference_id: newId(),
      source: c.peer,
      destination: c.self,
      text,
    });
    await publishResourceEvent(rig.publisher, 'conversation_message_created', conversationMessageJson(m));
  }

  it('delivers the events of the agent’s own conversation and nothing else', async () => {
    const mine = await conversationFor(rig, tm.f.customer.id, tm.a.id);
    const theirs = await conversationFor(rig, tm.f.customer.id, tm.b.id);
    const ws = await connect(rig.wsUrl(`token=${tm.a.token}`));
    ws.send({ type: 'subscribe', topics: [`customer_id:${tm.f.customer.id}:conversation:${mine.id}`, `agent_id:${tm.a.id}:conversation`] });
    await settle(200);
    await message(theirs, 'for b');
    await message(mine, 'for a');
    await publishResourceEvent(rig.publisher, 'conversation_updated', conversationJson(theirs));
    await publishResourceEvent(rig.publisher, 'conversation_updated', conversationJson(mine));
    await ws.waitFor(2);
    await settle(300);
    expect(ws.frames.map((f) => `${f.event_type}:${String(f.data.text ?? f.data.id)}`)).to.deep.equal(['conversation_message_created:for a', `conversation_updated:${mine.id}`]);
    expect(ws.frames[0]!.data.conversation_id).to.equal(mine.id);

    // Once unassigned, the conversation's events stop reaching a even on the old topic.
    const un = await request(rig.t.app)
      .post(`/v1.0/service_agents/conversations/${mine.id}/unassign`)
      .set({ Authorization: `Bearer ${tm.a.token}` });
    expect(un.status).to.equal(200);
    await message(mine, 'after unassign');
    await settle(400);
    expect(ws.frames.map((f) => f.data.text).filter(Boolean)).to.deep.equal(['for a']);
    ws.socket.close();
  });

  it('a webchat visitor’s messages reach the agent that owns the session’s conversation', async () => {
    const q = { accesskey: tm.f.accesskey };
    const w = (await request(rig.t.app).post('/v1.0/webchat_widgets').query(q).send({ name: 'w' })).body as { direct_hash: string };
    const token = (await request(rig.t.app).post('/auth/boot').send({ direct_hash: w.direct_hash })).body.token as string;
    const s = (
      await request(rig.t.app)
        .post('/v1.0/webchat_sessions')
        .set({ Authorization: `Bearer ${token}` })
        .send({})
    ).body as { id: string };
    const conv = (await rig.t.ctx.db('webchat_sessions').where({ id: s.id }).first()) as { conversation_id: string };
    await request(rig.t.app).put(`/v1.0/conversations/${conv.conversation_id}`).query(q).send({ owner_type: 'agent', owner_id: tm.a.id });
    const a = await connect(rig.wsUrl(`token=${tm.a.token}`));
    const b = await connect(rig.wsUrl(`token=${tm.b.token}`));
    a.send({ type: 'subscribe', topics: [`customer_id:${tm.f.customer.id}:webchat_session:${s.id}`] });
    b.send({ type: 'subscribe', topics: [`agent_id:${tm.b.id}`] });
    await settle(200);
    await request(rig.t.app)
      .post('/v1.0/webchat_messages')
      .set({ Authorization: `Bearer ${token}` })
      .send({ text: 'help me' });
    await a.waitFor(1);
    await settle(300);
    expect(a.frames.map((f) => f.event_type)).to.deep.equal(['webchat_message_created']);
    expect(a.frames[0]!.topic).to.equal(`customer_id:${tm.f.customer.id}:webchat_session:${s.id}`);
    expect(b.frames).to.have.length(0);
    a.socket.close();
    b.socket.close();
  });

  it('a frame with more topics than a socket holds (100) is refused before any topic is checked', async () => {
    // the checks of one frame run together (database reads for most): a frame of a thousand topics must not
    // start a thousand reads. 100 topics of the agent's own feed, then one refused: the count wins
    const own = Array.from({ length: 100 }, () => `agent_id:${tm.a.id}:conversation:${newId()}`);
    const ws = await connect(rig.wsUrl(`token=${tm.a.token}`));
    ws.send({ type: 'subscribe', topics: [...own, `agent_id:${tm.b.id}`] });
    expect(await ws.closed).to.deep.equal({ code: 1008, reason: 'at most 100 topics' });
  });

  it('refuses topics outside the agent’s reach, other agents’ feeds and non-agent credentials', async () => {
    const theirs = await conversationFor(rig, tm.f.customer.id, tm.b.id);
    for (const topic of [
      `customer_id:${tm.f.customer.id}:conversation:${theirs.id}`,
      `agent_id:${tm.b.id}`,
      `customer_id:${tm.f.customer.id}`,
      `customer_id:${tm.f.customer.id}:call:*`,
      'not-a-topic',
    ]) {
      const ws = await connect(rig.wsUrl(`token=${tm.a.token}`));
      ws.send({ type: 'subscribe', topics: [topic] });
      const closed = await ws.closed;
      expect(closed.code, topic).to.equal(1008);
    }
    const bad = await connect(rig.wsUrl(`token=${tm.a.token}`));
    bad.socket.send('{nope');
    expect((await bad.closed).code).to.equal(1008);
    const err = await connect(rig.wsUrl(`accesskey=${tm.f.accesskey}`)).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.equal('HTTP 403');
    const none = await connect(rig.wsUrl('')).then(
      () => null,
      (e: Error) => e,
    );
    expect(none?.message).to.equal('HTTP 401');
    // The hyphenated spelling is the same socket.
    const alias = await connect(rig.wsUrl(`token=${tm.a.token}`).replace('service_agents', 'service-agents'));
    alias.socket.close();
  });
});
