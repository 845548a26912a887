// Versions side by side over SIP (issue 56, docs/evals.md "Versions side by side"): an ai_talk agent on
// the OpenAI-compatible stand-in whose version 1 answers the caller's question and whose version 2
// (its instructions changed) deliberately does not; one scenario, one run over both versions. Each
// call is a simulated caller dialling the platform's SIP edge under a Call-ID the run pinned to its
// version: version 1 passes, version 2 fails, and the compare block names the check that moved. A
// flow pinning version 1 runs it while the AI is at version 2, compared against the first run as its
// baseline; a run whose calls never reach that AI fails instead of comparing nothing.
import { expect } from 'chai';
import request from 'supertest';
import { aisRepo } from '../../core/repos/ais';
import type { TestApp, Fixture } from '../../testkit/api';
import type { LlmRequest, LlmServer } from '../../testkit/llm-server';
import type { Platform } from '../../testkit/media-app/harness';
import { aiTalkActions, evalRunEnded, numberWithFlow, postEvalRun, postEvalScenario, standInAi, startEvalWorker, useLiveEvals } from '../../testkit/evals/live';
import type { EvalCallResult } from '../../core/evals/schema';

const PHRASES = ['what are your opening hours', 'thank you goodbye'];
const ANSWER = 'We are open from nine in the morning until six in the evening.';
const BROKEN = 'Sorry, the shop is shut.';

/** The stand-in answers by the AI's instructions: version 2's say the shop is shut. */
function respond(req: LlmRequest) {
  const system = req.messages.find((m) => m.role === 'system')?.content ?? '';
  const asked = req.messages.some((m) => m.role === 'user' && m.content);
  if (!asked) return { text: '' };
  return { text: system.includes('shut') ? BROKEN : ANSWER };
}

describe('eval run over two AI versions side by side, over SIP', function () {
  this.timeout(180_000);
  let p: Platform;
  let llm: LlmServer;
  let t: TestApp;
  let f: Fixture;
  let aiId = '';
  const NUMBER = '+899570000101';
  const PINNED = '+899570000102';
  const NO_AI = '+899570000103';
  const api = useLiveEvals('evals-versions-', respond, (s) => ({ p, llm, t, f } = s));
  const { auth } = api;
  const talk = (more: Record<string, unknown> = {}) => aiTalkActions(aiId, more);

  before(async () => {
    const ai = await standInAi(api, llm.url, { parameter: { stt_phrases: PHRASES } });
    aiId = ai.id;
    // version 2: its instructions broken on purpose
    await aisRepo(t.ctx.db).update(f.customer.id, ai.id, { init_prompt: 'You tell every caller the shop is shut.' });
    await numberWithFlow(api, NUMBER, talk());
    await numberWithFlow(api, PINNED, talk({ ai_version: 1 }));
    await numberWithFlow(api, NO_AI, [{ type: 'answer' }, { type: 'sleep', option: { duration: 1000 } }, { type: 'hangup' }]);
    api.worker = startEvalWorker(api, p);
  });

  type Summary = {
    version: number;
    calls: number;
    pass_rate: number | null;
    checks: { index: number; type: string; passed: number; of: number }[];
    latency: Record<string, { n: number; p50: number; p95: number; p99: number }>;
  };
  type Moves = { checks: { index: number; type: string; moved: string; from: { passed: number }; to: { passed: number } }[]; latency: unknown[] };
  type Run = {
    id: string;
    status: string;
    error: string;
    results: EvalCallResult[];
    pass_rate: number | null;
    latency: Summary['latency'];
    by_version: Summary[];
    compare: (Moves & { from_version: number; to_version: number }) | null;
    baseline: (Moves & { run_id: string }) | null;
  };

  let scenarioId = '';
  /** A run of the scenario against `number` (the first call makes the scenario, the others retarget it: the same checks, compared check by check). */
  async function run(number: string, turns: unknown[], body: Record<string, unknown>): Promise<Run> {
    const checks = [
      { type: 'transcript_contains', role: 'agent', text: 'open from nine' },
      { type: 'latency_under', ms: 10_000 },
    ];
    const scenario = { name: 'opening hours', target: { type: 'number', target: number }, caller: { turns }, checks };
    if (scenarioId)
      await auth(request(t.app).put(`/v1.0/eval_scenarios/${scenarioId}`))
        .send(scenario)
        .expect(200);
    else scenarioId = await postEvalScenario(api, scenario);
    return evalRunEnded<Run>(api, await postEvalRun(api, { scenario_ids: [scenarioId], ...body }), 120_000);
  }
  const ask = [{ wait_ms: 1000 }, { say: 'What are your opening hours?' }, { wait_ms: 9000 }, { hangup: true }];
  let sideBySide: Run;

  /** Postgres takes `seconds` over each delete of a pin: a run's end seen before its pins are gone shows. */
  async function slowPinDrops<T>(seconds: number, body: () => Promise<T>): Promise<T> {
    await t.ctx.db.raw(`CREATE OR REPLACE FUNCTION versions_test_slow_pin_drop() RETURNS trigger AS $$ BEGIN PERFORM pg_sleep(${seconds}); RETURN OLD; END $$ LANGUAGE plpgsql`);
    await t.ctx.db.raw('CREATE TRIGGER versions_test_slow_pin_drop BEFORE DELETE ON eval_call_pins FOR EACH ROW EXECUTE FUNCTION versions_test_slow_pin_drop()');
    try {
      return await body();
    } finally {
      // (waits for a drop still under way: the trigger's removal needs the table to itself)
      await t.ctx.db.raw('DROP TRIGGER versions_test_slow_pin_drop ON eval_call_pins');
      await t.ctx.db.raw('DROP FUNCTION versions_test_slow_pin_drop()');
    }
  }

  it('version 1 passes, version 2 fails, and the compare block names the check that moved', async () => {
    // the pins' drop made slow (found in CI: the run was read finished while its pins were still there)
    const [r, pinsLeft] = await slowPinDrops(0.5, async () => {
      const ended = await run(NUMBER, ask, { ai_id: aiId, versions: [1, 2], calls: 1, concurrency: 2 });
      return [ended, await t.ctx.db('eval_call_pins').where({ run_id: ended.id })] as const;
    });
    // the pins went before the run's end was seen
    expect(pinsLeft).to.deep.equal([]);
    sideBySide = r;
    expect(r.status, r.error).to.equal('finished');
    expect(r.results.map((x) => x.ai_version).sort()).to.deep.equal([1, 2]);
    const of = (v: number) => r.results.find((x) => x.ai_version === v)!;
    const agent = (v: number) =>
      of(v)
        .transcript.filter((l) => l.role === 'agent')
        .map((l) => l.text);
    expect(agent(1), JSON.stringify(of(1))).to.include(ANSWER);
    expect(agent(2), JSON.stringify(of(2))).to.include(BROKEN);
    expect(of(1).passed).to.equal(true);
    expect(of(2).passed).to.equal(false);

    const [v1, v2] = r.by_version;
    expect([v1!.version, v1!.calls, v1!.pass_rate]).to.deep.equal([1, 1, 1]);
    expect([v2!.version, v2!.calls, v2!.pass_rate]).to.deep.equal([2, 1, 0]);
    expect(v1!.checks.map((c) => [c.type, c.passed, c.of])).to.deep.equal([
      ['transcript_contains', 1, 1],
      ['latency_under', 1, 1],
    ]);
    expect(v2!.checks.map((c) => [c.type, c.passed, c.of])).to.deep.equal([
      ['transcript_contains', 0, 1],
      ['latency_under', 1, 1],
    ]);
    for (const v of [v1!, v2!]) expect(v.latency.latency_ms, JSON.stringify(v)).to.include({ n: 1 });

    expect(r.compare).to.include({ from_version: 1, to_version: 2 });
    expect(r.compare!.checks.map((c) => [c.index, c.type, c.moved, c.from.passed, c.to.passed])).to.deep.equal([[0, 'transcript_contains', 'worse', 1, 0]]);
    // the run's percentiles over both calls' turns
    expect(r.latency.latency_ms!.n).to.equal(2);
    expect(r.latency.latency_ms!.p50).to.be.at.most(r.latency.latency_ms!.p95);
    expect(r.latency.latency_ms!.p95).to.be.at.most(r.latency.latency_ms!.p99);
  });

  it('a flow pinning version 1 runs it while the AI is at version 2; compared with the first run as its baseline', async () => {
    const r = await run(PINNED, ask, { baseline_run_id: sideBySide.id });
    expect(r.status, r.error).to.equal('finished');
    const agent = r.results[0]!.transcript.filter((l) => l.role === 'agent').map((l) => l.text);
    expect(agent, JSON.stringify(r.results[0])).to.include(ANSWER);
    expect(r.results[0]!.passed).to.equal(true);
    expect(r.baseline!.run_id).to.equal(sideBySide.id);
    expect(r.baseline!.checks.map((c) => [c.index, c.type, c.moved])).to.deep.equal([[0, 'transcript_contains', 'better']]);
    expect(r.compare).to.equal(null);
  });

  it('a run over versions whose calls never start that AI fails, each call saying its version was not applied', async () => {
    const r = await run(NO_AI, [{ wait_ms: 4000 }, { hangup: true }], { ai_id: aiId, versions: [1, 2] });
    expect(r.status).to.equal('failed');
    expect(r.error).to.equal('2 of 2 call(s) did not run the AI version they were pinned to');
    for (const x of r.results) {
      expect(x.ended_by).to.equal('agent');
      expect(x.passed).to.equal(false);
      expect(x.error).to.equal(`no ai_talk of AI ${aiId} ran on the call: version ${x.ai_version} was not applied`);
    }
  });
});
