// /aiaudits: each AI participant of a terminated AI call is evaluated by the server-wide LLM (a real
// OpenAI-speaking server on loopback); permissions, wrong state and bad input.
import { expect } from 'chai';
import { startHarness, actors, reset, as, type Harness, type Actors } from '../resources/support';
import { startLlmServer, type LlmServer } from '../../../testkit/llm-server';
import { until } from '../../../testkit/media-app/harness';
import { aisRepo } from '../../../core/repos/ais';
import { aicallsRepo } from '../../../core/repos/ai-calls';
import { newId } from '../../../core/ids';

describe('/aiaudits', function () {
  this.timeout(30000);
  let h: Harness;
  let a: Actors;
  let llm: LlmServer;
  let answer = '';
  let saved: string | undefined;
  before(async () => {
    h = await startHarness({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
    llm = await startLlmServer({ respond: () => ({ text: answer }) });
    saved = process.env.AI_LLM_BASE_URL;
    process.env.AI_LLM_BASE_URL = llm.url;
  });
  after(async () => {
    if (saved === undefined) delete process.env.AI_LLM_BASE_URL;
    else process.env.AI_LLM_BASE_URL = saved;
    await llm.close();
    await h.close();
  });
  beforeEach(async () => {
    await reset();
    a = await actors(h);
  });

  /** A terminated team call in which two AIs answered. */
  async function finishedCall() {
    const db = h.t.ctx.db;
    const [g, e] = [await aisRepo(db).create(a.customerId, { name: 'g' }), await aisRepo(db).create(a.customerId, { name: 'e' })];
    const calls = aicallsRepo(db);
    const call = await calls.create(a.customerId, { assistance_type: 'team', assistance_id: newId(), reference_type: 'conversation' });
    await calls.addMessage({ customer_id: a.customerId, aicall_id: call.id, role: 'user', content: 'my order is late', direction: 'incoming' });
    await calls.addMessage({ customer_id: a.customerId, aicall_id: call.id, active_ai_id: g.id, role: 'assistant', content: 'let me pass you on', direction: 'outgoing' });
    await calls.addMessage({ customer_id: a.customerId, aicall_id: call.id, active_ai_id: e.id, role: 'assistant', content: 'it ships today', direction: 'outgoing' });
    return { call, g, e };
  }

  it('a terminated call: one audit per participant, 202 progressing, then completed with the evaluation', async () => {
    const { call, g, e } = await finishedCall();
    const early = await as(h, a.manager).post('/v1.0/aiaudits').send({ aicall_id: call.id });
    expect([early.status, early.body.error.reason]).to.deep.equal([409, 'STATE_INVALID']);
    await aicallsRepo(h.t.ctx.db).transition(call.id, 'terminated');
    answer = 'Here: {"overall_score": 4, "dimensions": {"tone": {"score": 5, "reason": "kind"}}, "summary": "fine"}';
    const r = await as(h, a.manager).post('/v1.0/aiaudits').send({ aicall_id: call.id, language: 'de-DE' });
    expect(r.status).to.equal(202);
    expect(r.body.result.map((x: { ai_id: string }) => x.ai_id)).to.have.members([g.id, e.id]);
    expect(r.body.result.every((x: { status: string; language: string }) => x.status === 'progressing' && x.language === 'de-DE')).to.equal(true);
    const id = r.body.result[0].id as string;
    const done = await until(
      async () => {
        const b = (await as(h, a.agent).get(`/v1.0/aiaudits/${id}`)).body;
        return b.status !== 'progressing' ? b : null;
      },
      10000,
      'audit finished',
    );
    expect(done).to.include({ status: 'completed', overall_score: 4, error: '' });
    expect(done.evaluation.summary).to.equal('fine');
    expect(done.message_ids).to.have.length(3);
    const asked = llm.requests.at(-1)!.messages;
    expect(asked[0]!.content).to.include('de-DE');
    expect(asked[1]!.content).to.match(/User: my order is late/);
    expect((await as(h, a.agent).get('/v1.0/aiaudits').query({ ai_id: g.id })).body.result).to.have.length(1);
    const del = await as(h, a.manager).delete(`/v1.0/aiaudits/${id}`);
    expect(del.status).to.equal(200);
    expect((await as(h, a.agent).get(`/v1.0/aiaudits/${id}`)).status).to.equal(404);
  });

  it('an answer that is not an evaluation ends the audit failed with the reason', async () => {
    const { call } = await finishedCall();
    await aicallsRepo(h.t.ctx.db).transition(call.id, 'terminated');
    answer = '{"overall_score": 9}';
    const r = await as(h, a.admin).post('/v1.0/aiaudits').send({ aicall_id: call.id });
    const b = await until(
      async () => {
        const x = (await as(h, a.agent).get(`/v1.0/aiaudits/${r.body.result[0].id}`)).body;
        return x.status !== 'progressing' ? x : null;
      },
      10000,
      'audit finished',
    );
    expect(b).to.include({ status: 'failed', overall_score: null, evaluation: null });
    expect(b.error).to.match(/overall_score/);
  });

  it('refuses bad input, unknown calls and callers below manager', async () => {
    for (const body of [{}, { aicall_id: 'x' }, { aicall_id: newId(), language: 'not a tag' }, { aicall_id: newId(), extra: 1 }]) {
      const r = await as(h, a.manager).post('/v1.0/aiaudits').send(body);
      expect([r.status, r.body.error.reason], JSON.stringify(body)).to.deep.equal([400, 'INVALID_ARGUMENT']);
    }
    expect((await as(h, a.manager).post('/v1.0/aiaudits').send({ aicall_id: newId() })).status).to.equal(404);
    expect((await as(h, a.agent).post('/v1.0/aiaudits').send({ aicall_id: newId() })).status).to.equal(403);
    expect((await as(h, a.agent).get('/v1.0/aiaudits').query({ aicall_id: 'x' })).body.error.reason).to.equal('INVALID_ID');
    expect((await as(h, a.agent).delete(`/v1.0/aiaudits/${newId()}`)).status).to.equal(403);
  });
});
