// Scenario targets `flow` and `ai` (issue 56, docs/evals.md "Targets"): each is dialled through the SIP
// edge under the customer's number that routes to it, never by a way into media-app of its own. Written
// without such a number, the scenario is refused naming what to route; a number taken away after the run
// was made refuses that call in the worker (ended_by refused, the reason in its error). Reached, a flow
// target plays its flow and an AI target talks with that AI's ai_talk (the OpenAI-compatible stand-in).
import { expect } from 'chai';
import request from 'supertest';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { lastUser, type LlmServer } from '../../testkit/llm-server';
import type { Platform } from '../../testkit/media-app/harness';
import { evalRunEnded, postEvalRun, standInAi, startEvalWorker, useLiveEvals } from '../../testkit/evals/live';
import type { EvalCallResult } from '../../core/evals/schema';

const ANSWER = 'We are open from nine in the morning until six in the evening.';

describe('eval targets: a flow and an AI configuration, reached under their number', function () {
  this.timeout(150_000);
  let p: Platform;
  let llm: LlmServer;
  let t: TestApp;
  let f: Fixture;
  let aiId = '';
  const api = useLiveEvals(
    'evals-targets-',
    (req) => (lastUser(req) ? { text: ANSWER } : { text: '' }),
    (s) => ({ p, llm, t, f } = s),
  );
  const { auth } = api;

  before(async () => {
    aiId = (await standInAi(api, llm.url, { parameter: { stt_phrases: ['what are your opening hours'] } })).id;
  });

  async function flowOf(actions: unknown[]): Promise<string> {
    return (await flowsRepo(t.ctx.db).create({ customer_id: f.customer.id, actions: parseActions(actions) })).id;
  }
  const scenario = (target: unknown, turns: unknown[], checks: unknown[] = []) => auth(request(t.app).post('/v1.0/eval_scenarios')).send({ name: 'target', target, caller: { turns }, checks });
  type Run = { status: string; error: string; results: EvalCallResult[] };
  const run = (scenarioId: string) => postEvalRun(api, { scenario_ids: [scenarioId] });
  function ended(runId: string): Promise<Run> {
    api.worker ??= startEvalWorker(api, p);
    return evalRunEnded<Run>(api, runId);
  }

  it('refuses a flow or an AI that no number of the customer routes to, or that is not the customer’s', async () => {
    const flowId = await flowOf([{ type: 'answer' }, { type: 'hangup' }]);
    const bare = await scenario({ type: 'flow', target: flowId }, [{ wait_ms: 100 }]).expect(400);
    expect(bare.body.error.details).to.deep.equal([{ field: 'target.target', issue: 'no number routes to this flow' }]);
    expect(bare.body.error.message).to.contain('give the flow a number');
    const noAi = await scenario({ type: 'ai', target: aiId }, [{ wait_ms: 100 }]).expect(400);
    expect(noAi.body.error.details).to.deep.equal([{ field: 'target.target', issue: 'no number routes to a flow running this AI' }]);
    const other = await createFixture(t.ctx);
    const theirs = await auth(request(t.app).post('/v1.0/eval_scenarios'))
      .set('Authorization', `Bearer ${other.token}`)
      .send({ name: 'x', target: { type: 'flow', target: flowId }, caller: { turns: [{ wait_ms: 100 }] }, checks: [] })
      .expect(400);
    expect(theirs.body.error.details).to.deep.equal([{ field: 'target.target', issue: 'not a flow of this customer' }]);
    await scenario({ type: 'flow', target: 'not-a-uuid' }, [{ wait_ms: 100 }]).expect(400);
  });

  it('a flow target plays the flow of its number; the number gone before the worker dials, the call is refused', async () => {
    const flowId = await flowOf([{ type: 'answer' }, { type: 'sleep', option: { duration: 1000 } }, { type: 'hangup' }]);
    await numbersRepo(t.ctx.db).create({ customer_id: f.customer.id, number: '+899570000101', type: 'virtual', call_flow_id: flowId });
    const s = (await scenario({ type: 'flow', target: flowId }, [{ wait_ms: 5000 }, { hangup: true }], [{ type: 'ended_by', by: 'agent' }]).expect(200)).body.id as string;
    const done = await ended(await run(s));
    expect(done.status, done.error).to.equal('finished');
    expect(done.results[0]).to.include({ ended_by: 'agent', passed: true });
    const call = await t.ctx.db('calls').where({ id: done.results[0]!.call_id }).first();
    expect(call).to.include({ customer_id: f.customer.id, flow_id: flowId, direction: 'incoming' });

    const later = await run(s);
    await t.ctx
      .db('numbers')
      .where({ number: '+899570000101' })
      .update({ call_flow_id: await flowOf([{ type: 'hangup' }]) });
    const refused = await ended(later);
    expect(refused.status).to.equal('failed');
    expect(refused.results[0]).to.include({ ended_by: 'refused', sip_call_id: '', passed: false });
    expect(refused.results[0]!.error).to.equal(
      `the target cannot be dialled: flow ${flowId} has no number: a simulated call enters through the SIP edge, so give the flow a number (its call_flow_id)`,
    );
  });

  it('an AI target talks with that AI: the number whose flow runs it with ai_talk', async () => {
    const flowId = await flowOf([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: aiId, duration: 40 } }, { type: 'hangup' }]);
    await numbersRepo(t.ctx.db).create({ customer_id: f.customer.id, number: '+899570000102', type: 'virtual', call_flow_id: flowId });
    const turns = [{ wait_ms: 1000 }, { say: 'What are your opening hours?' }, { wait_ms: 9000 }, { hangup: true }];
    const s = (await scenario({ type: 'ai', target: aiId }, turns, [{ type: 'transcript_contains', role: 'agent', text: 'open from nine' }]).expect(200)).body.id as string;
    const done = await ended(await run(s));
    expect(done.status, done.error).to.equal('finished');
    const [r] = done.results;
    expect(r!.passed, JSON.stringify(r)).to.equal(true);
    expect(r!.turns.length).to.be.at.least(1);
    expect((await t.ctx.db('calls').where({ id: r!.call_id }).first())!.flow_id).to.equal(flowId);
  });
});
