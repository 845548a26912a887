// POST /ais/{id}/activate_insight (one active Insight AI per customer) and the service-agent creation
// routes POST /service_agents/aicalls, /aimessages, /transcribes: the customer routes' behaviour on
// what the agent reaches (its conversations, the cases it owns or may pick), everything else 404.
import { expect } from 'chai';
import request from 'supertest';
import { as, EMPTY } from '../resources/support';
import { useParties } from './support';
import { aisRepo } from '../../../core/repos/ais';
import { contactCasesRepo } from '../../../core/repos/contact-cases';
import { conversationsRepo } from '../../../core/repos/conversations';
import { callsRepo } from '../../../core/repos/calls';
import { eventsFor, until } from '../../../testkit/media-app/harness';
import { startLlmServer, type LlmServer } from '../../../testkit/llm-server';

describe('activate_insight and the service-agent creation routes', function () {
  this.timeout(20000);
  const pt = useParties({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
  let llm: LlmServer;
  before(async () => {
    llm = await startLlmServer({ respond: () => ({ text: 'Happy to help.' }) });
  });
  after(() => llm?.close());

  const ai = (customerId: string, name: string, type: 'normal' | 'insight') =>
    aisRepo(pt.h.t.ctx.db).create(customerId, { name, type, engine_model: 'openai.gpt-5', engine_url: llm.url, engine_key: 'sk-test-0123456789abcdef', init_prompt: 'Be brief.' });
  const agentId = async (token: string) => (await as(pt.h, token).get('/v1.0/service_agents/me')).body.id as string;

  it('activate_insight: the AI becomes the only active one, the one before is deactivated, both published; idempotent; only insight AIs', async () => {
    const first = await ai(pt.a.customerId, 'first', 'insight');
    const second = await ai(pt.a.customerId, 'second', 'insight');
    const plain = await ai(pt.a.customerId, 'plain', 'normal');
    expect((await as(pt.h, pt.a.agent).get(`/v1.0/ais/${first.id}`)).body.is_insight_active, 'new AIs are inactive').to.equal(false);

    const r1 = await as(pt.h, pt.a.manager).post(`/v1.0/ais/${first.id}/activate_insight`);
    expect(r1.status, JSON.stringify(r1.body)).to.equal(200);
    expect(r1.body).to.include({ id: first.id, type: 'insight', is_insight_active: true });
    const r2 = await as(pt.h, pt.a.manager).post(`/v1.0/ais/${second.id}/activate_insight`);
    expect(r2.body.is_insight_active).to.equal(true);
    expect((await as(pt.h, pt.a.agent).get(`/v1.0/ais/${first.id}`)).body.is_insight_active).to.equal(false);
    const active = (await as(pt.h, pt.a.agent).get('/v1.0/ais')).body.result.filter((x: { is_insight_active: boolean }) => x.is_insight_active);
    expect(active.map((x: { id: string }) => x.id)).to.deep.equal([second.id]);
    const again = await as(pt.h, pt.a.manager).post(`/v1.0/ais/${second.id}/activate_insight`);
    expect(again.status).to.equal(200);
    expect(again.body.is_insight_active).to.equal(true);
    const events = await until(
      async () => {
        const ev = (await eventsFor(pt.h.t.ctx.redis, first.id)).filter((e) => e.event_type === 'ai_updated');
        return ev.length >= 2 ? ev : null;
      },
      5000,
      'ai_updated of the first AI',
    );
    expect(events.map((e) => e.data.is_insight_active)).to.deep.equal([true, false]);

    const bad = await as(pt.h, pt.a.manager).post(`/v1.0/ais/${plain.id}/activate_insight`);
    expect(bad.status).to.equal(400);
    expect(bad.body.error.reason).to.equal('INVALID_ARGUMENT');
    expect((await as(pt.h, pt.a.manager).post('/v1.0/ais/nope/activate_insight')).status).to.equal(400);
    expect((await as(pt.h, pt.other.manager).post(`/v1.0/ais/${second.id}/activate_insight`)).status).to.equal(404);
    expect((await as(pt.h, pt.a.agent).post(`/v1.0/ais/${second.id}/activate_insight`)).status).to.equal(403);
    // an AI turned normal, or deleted, is no longer the active one
    await as(pt.h, pt.a.manager).put(`/v1.0/ais/${second.id}`).send({ name: 'second', type: 'normal' });
    expect((await as(pt.h, pt.a.agent).get(`/v1.0/ais/${second.id}`)).body.is_insight_active).to.equal(false);
  });

  it('service_agents/aicalls and /aimessages: on the agent’s cases and conversations; the Insight AI when no assistance_id; others 404', async () => {
    const db = pt.h.t.ctx.db;
    const me = await agentId(pt.a.agent);
    const peerAgent = await agentId(pt.a.manager);
    const insight = await ai(pt.a.customerId, 'insight', 'insight');
    const helper = await ai(pt.a.customerId, 'helper', 'normal');
    const cases = contactCasesRepo(db);
    const open = await cases.create({ customer_id: pt.a.customerId, reference_type: 'call', reference_id: EMPTY });
    const theirs = await cases.create({ customer_id: pt.a.customerId, reference_type: 'call', reference_id: EMPTY, owner_id: peerAgent });
    const conv = (await conversationsRepo(db).ensureThread(pt.a.customerId, 'message', { type: 'tel', target: '+15550001000' }, { type: 'tel', target: '+15550002000' })).row;
    await conversationsRepo(db).update(conv.id, { owner_type: 'agent', owner_id: me });

    const sa = as(pt.h, pt.a.agent);
    const onCase = await sa.post('/v1.0/service_agents/aicalls').send({ assistance_type: 'ai', reference_type: 'contact_case', reference_id: open.id });
    expect(onCase.status, JSON.stringify(onCase.body)).to.equal(200);
    expect(onCase.body).to.include({ assistance_type: 'ai', assistance_id: insight.id, reference_id: open.id, status: 'progressing' });
    const onConv = await sa.post('/v1.0/service_agents/aicalls').send({ assistance_type: 'ai', assistance_id: helper.id, reference_type: 'conversation', reference_id: conv.id });
    expect(onConv.status, JSON.stringify(onConv.body)).to.equal(200);

    const msg = await sa.post('/v1.0/service_agents/aimessages').send({ aicall_id: onConv.body.id, role: 'user', content: 'Where is my parcel?' });
    expect(msg.status, JSON.stringify(msg.body)).to.equal(200);
    expect(msg.body).to.include({ aicall_id: onConv.body.id, role: 'user', content: 'Where is my parcel?' });
    await until(async () => (await db('aimessages').where({ aicall_id: onConv.body.id, role: 'assistant' }).first()) ?? null, 5000, 'the AI answers');
    expect((await sa.post('/v1.0/service_agents/aimessages').send({ aicall_id: onCase.body.id, role: 'user', content: 'Summarise.' })).status).to.equal(200);

    // outside the agent's reach: another agent's case, another customer's aicall; bad input
    const foreign = await sa.post('/v1.0/service_agents/aicalls').send({ assistance_type: 'ai', reference_type: 'contact_case', reference_id: theirs.id });
    expect(foreign.status).to.equal(404);
    const manager = as(pt.h, pt.a.manager);
    const notMine = await manager.post('/v1.0/aicalls').send({ assistance_type: 'ai', assistance_id: helper.id, reference_type: 'conversation', reference_id: '' });
    expect((await sa.post('/v1.0/service_agents/aimessages').send({ aicall_id: notMine.body.id, role: 'user', content: 'x' })).status).to.equal(404);
    expect((await as(pt.h, pt.other.agent).post('/v1.0/service_agents/aimessages').send({ aicall_id: onConv.body.id, role: 'user', content: 'x' })).status).to.equal(404);
    for (const body of [
      { assistance_type: 'ai', reference_type: 'conversation', reference_id: conv.id },
      { assistance_type: 'team', reference_type: 'contact_case', reference_id: open.id },
      { assistance_type: 'ai', assistance_id: helper.id, reference_type: 'call', reference_id: open.id },
      { assistance_type: 'ai', assistance_id: helper.id, reference_type: 'conversation' },
      { assistance_type: 'robot', assistance_id: helper.id, reference_type: 'conversation', reference_id: conv.id },
    ])
      expect((await sa.post('/v1.0/service_agents/aicalls').send(body)).status, JSON.stringify(body)).to.equal(400);
    expect((await sa.post('/v1.0/service_agents/aimessages').send({ aicall_id: onConv.body.id, role: 'boss', content: 'x' })).status).to.equal(400);
    expect((await sa.post('/v1.0/service_agents/aimessages').send({ aicall_id: onConv.body.id, role: 'user', content: '' })).status).to.equal(400);
    // an access key has no agent
    expect((await request(pt.h.app).post('/v1.0/service_agents/aicalls').query({ accesskey: pt.a.fx.accesskey }).send({})).status).to.equal(403);
  });

  it('service_agents/transcribes: only the agent’s calls and their recordings; a call not live is refused', async () => {
    const db = pt.h.t.ctx.db;
    const me = await agentId(pt.a.agent);
    const mine = await callsRepo(db).create({
      customer_id: pt.a.customerId,
      source: { type: 'agent', target: me },
      destination: { type: 'tel', target: '+15550003000' },
      direction: 'outgoing',
      status: 'hangup',
    });
    const other = await callsRepo(db).create({
      customer_id: pt.a.customerId,
      source: { type: 'tel', target: '+15550004000' },
      destination: { type: 'tel', target: '+15550003000' },
      direction: 'outgoing',
      status: 'progressing',
    });
    const sa = as(pt.h, pt.a.agent);
    const ended = await sa.post('/v1.0/service_agents/transcribes').send({ reference_type: 'call', reference_id: mine.id, language: 'en-US' });
    expect(ended.status, JSON.stringify(ended.body)).to.equal(409);
    expect(ended.body.error.reason).to.equal('CALL_STATE_INVALID');
    const notMine = await sa.post('/v1.0/service_agents/transcribes').send({ reference_type: 'call', reference_id: other.id, language: 'en-US' });
    expect(notMine.status).to.equal(404);
    const conf = await sa.post('/v1.0/service_agents/transcribes').send({ reference_type: 'confbridge', reference_id: other.id, language: 'en-US' });
    expect(conf.status).to.equal(404);
    const rec = await sa.post('/v1.0/service_agents/transcribes').send({ reference_type: 'recording', reference_id: other.id, language: 'en-US' });
    expect(rec.status).to.equal(404);
    for (const body of [
      { reference_type: 'call', reference_id: mine.id, language: 'en-US', provider: 'gcp' },
      { reference_type: 'call', reference_id: 'x', language: 'en-US' },
      { reference_type: 'fax', reference_id: mine.id },
    ]) {
      expect((await sa.post('/v1.0/service_agents/transcribes').send(body)).status, JSON.stringify(body)).to.equal(400);
    }
  });
});
