import { expect } from 'chai';
import { truncateAll } from '../../../testkit/db';
import { createAgent } from '../../../testkit/api';
import { Permission } from '../../../core/permissions';
import { EMPTY_UUID } from '../../../core/ids';
import { messagingPort, portFromDeps, setMessagingPort } from '../../../core/messaging/flow-port';
import { messagingDeps } from '../../../control-api/messaging/deps';
import { fixture, fund, ownedNumber, request, settle, startHarness, type Harness } from './support';

describe('messaging: conversations and conversation accounts', function () {
  this.timeout(20_000);
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => h.close());
  beforeEach(async () => {
    await truncateAll();
    h.twilio.requests.length = 0;
  });

  async function inboundThread(f: Awaited<ReturnType<typeof fixture>>) {
    const n = await ownedNumber(h, f);
    const r = await h.twilio.post(`${h.base}/hooks/sms/twilio/inbound`, { AccountSid: h.twilio.accountSid, MessageSid: `SM${Date.now()}`, From: '+15558880002', To: n.number, Body: 'hello' });
    expect(r.status).to.equal(200);
    const convs = (await request(h.server).get('/v1.0/conversations').query({ accesskey: f.accesskey })).body.result;
    return { n, conv: convs[0] };
  }

  it('conversation get/update/unassign, agent visibility, bad input, cross-customer 404', async () => {
    const f = await fixture(h);
    const g = await fixture(h);
    const { conv } = await inboundThread(f);
    const agent = await createAgent(h.t.ctx, f.customer.id, Permission.CustomerAgent);

    expect((await request(h.server).get(`/v1.0/conversations/${conv.id}`).query({ accesskey: f.accesskey })).body.type).to.equal('message');
    const cross = await request(h.server).get(`/v1.0/conversations/${conv.id}`).query({ accesskey: g.accesskey });
    expect([cross.status, cross.body.error.reason]).to.deep.equal([404, 'CONVERSATION_NOT_FOUND']);
    expect((await request(h.server).get(`/v1.0/conversations/${conv.id}/messages`).query({ accesskey: g.accesskey })).status).to.equal(404);
    expect((await request(h.server).post(`/v1.0/conversations/${conv.id}/messages`).query({ accesskey: g.accesskey }).send({ text: 'x' })).status).to.equal(404);
    expect((await request(h.server).put(`/v1.0/conversations/${conv.id}`).query({ accesskey: g.accesskey }).send({ name: 'x' })).status).to.equal(404);
    expect((await request(h.server).get('/v1.0/conversations/zzz').query({ accesskey: f.accesskey })).body.error.reason).to.equal('INVALID_ID');

    // An agent sees only conversations it owns, and must say so.
    const auth = `Bearer ${agent.token}`;
    expect((await request(h.server).get('/v1.0/conversations').set('authorization', auth)).status).to.equal(403);
    expect((await request(h.server).get('/v1.0/conversations').set('authorization', auth).query({ owner_id: agent.agent.id })).body.result).to.have.length(0);
    const put = await request(h.server).put(`/v1.0/conversations/${conv.id}`).query({ accesskey: f.accesskey }).send({ owner_type: 'agent', owner_id: agent.agent.id, name: 'Support' });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body).to.include({ owner_id: agent.agent.id, name: 'Support' });
    expect((await request(h.server).get('/v1.0/conversations').set('authorization', auth).query({ owner_id: agent.agent.id })).body.result).to.have.length(1);
    const un = await request(h.server).post(`/v1.0/conversations/${conv.id}/unassign`).set('authorization', auth);
    expect([un.status, un.body.owner_id]).to.deep.equal([200, EMPTY_UUID]);

    const badPuts: unknown[] = [{ owner_id: 'x' }, { owner_id: g.admin.id }, { owner_type: 'robot' }, { name: 'x'.repeat(256) }, { nope: 1 }];
    for (const b of badPuts) {
      const r = await request(h.server)
        .put(`/v1.0/conversations/${conv.id}`)
        .query({ accesskey: f.accesskey })
        .send(b as object);
      expect(r.status, JSON.stringify(b)).to.equal(400);
    }
    for (const b of [{}, { text: '' }, { text: 'x', medias: [{}] }, { text: 1 }]) {
      const r = await request(h.server).post(`/v1.0/conversations/${conv.id}/messages`).query({ accesskey: f.accesskey }).send(b);
      expect(r.status, JSON.stringify(b)).to.equal(400);
    }
    // Replying costs like an SMS: no balance → 402 and nothing added to the thread.
    const poor = await request(h.server).post(`/v1.0/conversations/${conv.id}/messages`).query({ accesskey: f.accesskey }).send({ text: 'x' });
    expect(poor.status).to.equal(402);
    expect((await request(h.server).get(`/v1.0/conversations/${conv.id}/messages`).query({ accesskey: f.accesskey })).body.result).to.have.length(1);
  });

  it('conversation accounts: CRUD on both spellings, secrets never returned, bad input, cross-customer 404', async () => {
    const f = await fixture(h);
    const g = await fixture(h);
    const created = await request(h.server)
      .post('/v1.0/conversation-accounts')
      .query({ accesskey: f.accesskey })
      .send({ type: 'sms', name: 'main', detail: 'd', secret: 's3cret', token: 't0ken', provider_data: { app_secret: 'x' } });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    expect(created.body).to.include({ type: 'sms', name: 'main', message_flow_id: EMPTY_UUID });
    expect(JSON.stringify(created.body)).to.not.match(/s3cret|t0ken|app_secret/);
    const id = created.body.id;
    expect((await request(h.server).get(`/v1.0/conversation_accounts/${id}`).query({ accesskey: f.accesskey })).body.name).to.equal('main');
    expect((await request(h.server).get('/v1.0/conversation-accounts').query({ accesskey: f.accesskey })).body.result).to.have.length(1);
    const upd = await request(h.server).put(`/v1.0/conversation-accounts/${id}`).query({ accesskey: f.accesskey }).send({ name: 'renamed' });
    expect(upd.body.name).to.equal('renamed');
    for (const b of [
      { type: 'fax', name: '', detail: '', secret: '', token: '' },
      { type: 'sms', name: 'x' },
      { type: 'sms', name: '', detail: '', secret: '', token: '', extra: 1 },
      { type: 'sms', name: '', detail: '', secret: '', token: '', message_flow_id: 'x' },
    ]) {
      const r = await request(h.server).post('/v1.0/conversation-accounts').query({ accesskey: f.accesskey }).send(b);
      expect(r.status, JSON.stringify(b)).to.equal(400);
    }
    for (const [method, url] of [
      ['get', `/v1.0/conversation-accounts/${id}`],
      ['put', `/v1.0/conversation-accounts/${id}`],
      ['delete', `/v1.0/conversation_accounts/${id}`],
    ] as const) {
      const agentOf = request(h.server);
      const r = await agentOf[method](url)
        .query({ accesskey: g.accesskey })
        .send(method === 'put' ? { name: 'x' } : (undefined as never));
      expect([r.status, r.body.error.reason], `${method} ${url}`).to.deep.equal([404, 'CONVERSATION_ACCOUNT_NOT_FOUND']);
    }
    const agent = await createAgent(h.t.ctx, f.customer.id, Permission.CustomerAgent);
    expect((await request(h.server).get('/v1.0/conversation-accounts').set('authorization', `Bearer ${agent.token}`)).status).to.equal(403);
    expect((await request(h.server).delete(`/v1.0/conversation-accounts/${id}`).query({ accesskey: f.accesskey })).status).to.equal(200);
    expect((await request(h.server).get(`/v1.0/conversation-accounts/${id}`).query({ accesskey: f.accesskey })).status).to.equal(404);
  });

  it('the flow actions’ port sends SMS, email and conversation messages', async () => {
    const f = await fixture(h);
    await fund(h, f, 1_000_000);
    const { n, conv } = await inboundThread(f);
    const before = messagingPort();
    setMessagingPort(portFromDeps(messagingDeps(h.t.ctx)));
    // the sends answered late: settle() must wait for the port's deliveries (CI, under load: the conversation's was not there)
    h.twilio.answerDelayMs = 300;
    try {
      const port = messagingPort()!;
      const m = await port.sendMessage(f.customer.id, { source: { type: 'tel', target: n.number }, destinations: [{ type: 'tel', target: '+15557773333' }], text: 'from a flow' });
      const cm = await port.sendConversation(f.customer.id, conv.id, 'reply from a flow');
      await settle(h);
      expect(h.twilio.sent('+15557773333').form.Body).to.equal('from a flow');
      expect(h.twilio.sent('+15558880002').form.Body).to.equal('reply from a flow');
      expect((await request(h.server).get(`/v1.0/messages/${m.id}`).query({ accesskey: f.accesskey })).status).to.equal(200);
      expect((await h.t.ctx.db('conversation_messages').where({ id: cm.id }).first())!.conversation_id).to.equal(conv.id);
      let err: Error | null = null;
      try {
        await port.sendConversation(f.customer.id, EMPTY_UUID, 'x');
      } catch (e) {
        err = e as Error;
      }
      expect(err?.message).to.equal('conversation not found');
    } finally {
      h.twilio.answerDelayMs = 0;
      setMessagingPort(before);
    }
  });
});
