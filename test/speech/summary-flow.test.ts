// A summary's on_end_flow_id: once the summary is done (POST /summaries in control-api, or the
// ai_summary action on a media-app node) that flow runs as an activeflow (reference ai → the
// summary) holding the summary in svc.ai_summary.*; a local LLM server answers. Bad input too.
import { expect } from 'chai';
import { until } from '../../testkit/media-app/harness';
import { truncateAll } from '../../testkit/db';
import { createFixture, type Fixture } from '../../testkit/api';
import { startLlmServer, type LlmServer } from '../../testkit/llm-server';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { transcribesRepo } from '../../core/repos/transcribes';
import { transcriptsRepo } from '../../core/repos/transcripts';
import { api, startStack, type Stack } from '../../testkit/speech/support';

describe('summaries: on_end_flow_id starts a flow with the summary', function () {
  this.timeout(60_000);
  let s: Stack;
  let f: Fixture;
  let llm: LlmServer;

  before(async () => {
    await truncateAll();
    llm = await startLlmServer({ respond: () => ({ text: 'The caller wants to cancel an order.' }) });
    process.env.AI_LLM_BASE_URL = llm.url;
    s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }); // the LLM server is on loopback
    f = await createFixture(s.t.ctx);
  });
  after(async () => {
    delete process.env.AI_LLM_BASE_URL;
    await s?.close();
    await llm?.close();
  });

  async function transcribeWithText(): Promise<string> {
    const t = await transcribesRepo(s.t.ctx.db).create({
      customer_id: f.customer.id,
      reference_type: 'recording',
      reference_id: f.customer.id,
      language: 'en-US',
      direction: 'in',
      provider: 'pocketsphinx',
    });
    await transcribesRepo(s.t.ctx.db).finish(t.id);
    await transcriptsRepo(s.t.ctx.db).create({ customer_id: f.customer.id, transcribe_id: t.id, direction: 'in', message: 'I would like to cancel my order', offset_ms: 0 } as never);
    return t.id;
  }

  /** A flow that copies the summary into custom variables (read back from the stored activeflow). */
  async function copyFlow(): Promise<string> {
    const flow = await flowsRepo(s.t.ctx.db).create({
      customer_id: f.customer.id,
      actions: parseActions([
        { type: 'variable_set', option: { key: 'got.content', value: '${svc.ai_summary.content}' } },
        { type: 'variable_set', option: { key: 'got.id', value: '${svc.ai_summary.id}' } },
      ]),
    } as never);
    return flow.id;
  }

  async function endedFlowOf(summaryId: string) {
    return until(
      async () => {
        const row = await s.t.ctx.db('activeflows').where({ reference_id: summaryId }).first();
        return row && row.status === 'ended' ? row : null;
      },
      20_000,
      'the on_end flow ran',
    );
  }

  it('POST /summaries: the flow runs when the summary is done, with svc.ai_summary.* set', async () => {
    const a = api(s.t, f);
    const tid = await transcribeWithText();
    const flowId = await copyFlow();
    const r = await a.post('/summaries', { reference_type: 'transcribe', reference_id: tid, on_end_flow_id: flowId });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.on_end_flow_id).to.equal(flowId);
    const af = await endedFlowOf(r.body.id);
    expect(af).to.include({ customer_id: f.customer.id, flow_id: flowId, reference_type: 'ai', end_reason: 'finished' });
    const vars = typeof af.variables === 'string' ? JSON.parse(af.variables) : af.variables;
    expect(vars['got.content']).to.equal('The caller wants to cancel an order.');
    expect(vars['got.id']).to.equal(r.body.id);
    expect(vars['svc.ai_summary.reference_type']).to.equal('transcribe');
    expect((await a.get(`/summaries/${r.body.id}`)).body).to.include({ status: 'done', content: 'The caller wants to cancel an order.' });

    // the nil UUID means none: no flow
    const plain = await a.post('/summaries', { reference_type: 'transcribe', reference_id: tid, on_end_flow_id: '00000000-0000-0000-0000-000000000000' });
    expect(plain.status, JSON.stringify(plain.body)).to.equal(200);
    await until(async () => ((await a.get(`/summaries/${plain.body.id}`)).body.status === 'done' ? true : null), 10_000, 'plain summary done');
    expect(await s.t.ctx.db('activeflows').where({ reference_id: plain.body.id })).to.have.length(0);
  });

  it('the ai_summary action (media-app) runs its on_end_flow_id too', async () => {
    const a = api(s.t, f);
    const tid = await transcribeWithText();
    const flowId = await copyFlow();
    const af = await a.post('/activeflows', { actions: [{ type: 'ai_summary', option: { reference_type: 'transcribe', reference_id: tid, on_end_flow_id: flowId } }] });
    expect(af.status, JSON.stringify(af.body)).to.equal(201);
    const summary = await until(async () => (await s.t.ctx.db('summaries').where({ activeflow_id: af.body.id }).first()) ?? null, 15_000, 'summary created');
    const ran = await endedFlowOf(summary.id);
    expect(ran).to.include({ flow_id: flowId, reference_type: 'ai', reference_activeflow_id: af.body.id });
    const vars = typeof ran.variables === 'string' ? JSON.parse(ran.variables) : ran.variables;
    expect(vars['got.content']).to.equal('The caller wants to cancel an order.');
  });

  it('refuses an on_end_flow_id that is not a flow of the customer, or not an id', async () => {
    const a = api(s.t, f);
    const tid = await transcribeWithText();
    const missing = await a.post('/summaries', { reference_type: 'transcribe', reference_id: tid, on_end_flow_id: '00000000-0000-4000-8000-000000000009' });
    expect(missing.status).to.equal(404);
    expect(missing.body.error).to.include({ status: 'NOT_FOUND' });
    const other = await createFixture(s.t.ctx);
    const theirs = await flowsRepo(s.t.ctx.db).create({ customer_id: other.customer.id, actions: parseActions([{ type: 'answer' }]) } as never);
    expect((await a.post('/summaries', { reference_type: 'transcribe', reference_id: tid, on_end_flow_id: theirs.id })).status).to.equal(404);
    const bad = await a.post('/summaries', { reference_type: 'transcribe', reference_id: tid, on_end_flow_id: 'not-a-flow' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error).to.include({ status: 'INVALID_ARGUMENT' });
  });
});
