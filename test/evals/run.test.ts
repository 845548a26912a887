// An eval run end to end (issue 56, docs/evals.md): a number whose flow is ai_talk on the
// OpenAI-compatible stand-in (pocketsphinx hears the caller, espeak-ng speaks the answer); a scenario
// whose simulated caller waits, asks a question (espeak-ng into its own RTP), presses a digit
// (RFC 4733) and hangs up; a run of 2 calls at concurrency 2 carried by an evals worker whose callers
// dial the platform's SIP edge over UDP. The run reports both sides of each transcript, each agent
// turn's latency stages as ai_talk recorded them, and the checks' verdicts: the right ones pass, a
// deliberately wrong transcript_contains fails with its evidence.
import { expect } from 'chai';
import request from 'supertest';
import type { TestApp, Fixture } from '../../testkit/api';
import { lastUser, type LlmServer } from '../../testkit/llm-server';
import type { Platform } from '../../testkit/media-app/harness';
import { endedFlowOfCall } from '../../testkit/call-ends';
import { CALLER_SIDE } from '../../evals/agent-kind';
import { aiTalkActions, evalRunEnded, numberWithFlow, postEvalRun, postEvalScenario, standInAi, startEvalWorker, useLiveEvals } from '../../testkit/evals/live';
import type { EvalCallResult } from '../../core/evals/schema';
import { runEvalFile } from '../../scripts/eval/run-file';
import { serveApp } from '../../testkit/twilio';

const PHRASES = ['what are your opening hours', 'thank you goodbye'];
const ANSWER = 'We are open from nine in the morning until six in the evening.';

describe('eval run: simulated callers over SIP against an ai_talk agent', function () {
  this.timeout(150_000);
  let p: Platform;
  let llm: LlmServer;
  let t: TestApp;
  let f: Fixture;
  const NUMBER = '+899570000001';
  const api = useLiveEvals('evals-run-', undefined, (s) => ({ p, llm, t, f } = s));
  const { auth } = api;

  before(async () => {
    const ai = await standInAi(api, llm.url, { parameter: { stt_phrases: PHRASES } });
    await numberWithFlow(api, NUMBER, aiTalkActions(ai.id));
    llm.options.respond = (req) => (lastUser(req) ? { text: ANSWER } : { text: '' });
  });

  /** The worker, started once (the first test that needs it), dialling this suite's edge. */
  function startWorker(): void {
    api.worker ??= startEvalWorker(api, p);
  }

  type Run = { status: string; error: string; results: EvalCallResult[]; pass_rate: number | null };
  const ended = (runId: string) => evalRunEnded<Run>(api, runId);
  const numberWith = (number: string, actions?: unknown[]) => numberWithFlow(api, number, actions);

  async function runOf(number: string, turns: unknown[], checks: unknown[]): Promise<Run> {
    const scenarioId = await postEvalScenario(api, { name: 'short', target: { type: 'number', target: number }, caller: { turns }, checks });
    const runId = await postEvalRun(api, { scenario_ids: [scenarioId] });
    startWorker();
    return ended(runId);
  }

  it('the agent hanging up ends the script where it is: ended_by agent, nothing said, latency_under fails for want of a turn', async () => {
    await numberWith('+899570000002', [{ type: 'answer' }, { type: 'sleep', option: { duration: 1000 } }, { type: 'hangup' }]);
    const run = await runOf('+899570000002', [{ wait_ms: 5000 }, { say: 'Hello?' }, { hangup: true }], [{ type: 'latency_under', ms: 4000 }]);
    expect(run.status, run.error).to.equal('finished');
    const [r] = run.results;
    expect(r!.ended_by).to.equal('agent');
    expect(r!.transcript).to.deep.equal([]);
    expect(r!.checks).to.deep.equal([{ type: 'latency_under', passed: false, evidence: `no agent turn was measured (${CALLER_SIDE})` }]);
    expect((await t.ctx.db('calls').where({ id: r!.call_id }).first())!.hangup_by).to.equal('local');
  });

  it('a call the edge refuses fails the run, with the response in its error', async () => {
    await numberWith('+899570000003');
    const run = await runOf('+899570000003', [{ wait_ms: 100 }], []);
    expect(run.status).to.equal('failed');
    expect(run.error).to.equal('1 of 1 call(s) could not be placed or found');
    expect(run.results[0]).to.include({ ended_by: 'refused', call_id: '', passed: false });
    expect(run.results[0]!.error).to.match(/^the edge answered [45]\d\d$/);
  });

  it('the CI command (scripts/eval.ts): creates the inline scenarios, runs them, prints a row per call and the failing check; exit 1, 0, 2', async () => {
    await numberWith('+899570000004', [{ type: 'answer' }, { type: 'sleep', option: { duration: 500 } }, { type: 'hangup' }]);
    startWorker();
    const served = await serveApp(t.app);
    try {
      const scenario = (checks: unknown[]) => ({ name: 'ci short', target: { type: 'number', target: '+899570000004' }, caller: { turns: [{ wait_ms: 5000 }, { hangup: true }] }, checks });
      const lines: string[] = [];
      const o = { accesskey: f.accesskey, api: served.baseUrl, out: (l: string) => lines.push(l), pollMs: 100 };
      const failing = await runEvalFile(JSON.stringify({ scenarios: [scenario([{ type: 'latency_under', ms: 4000 }])] }), o);
      expect(failing, lines.join('\n')).to.equal(1);
      expect(lines[0]).to.match(/^run [0-9a-f-]{36}: finished, 1 call\(s\), pass rate 0%$/);
      expect(lines[1]).to.match(/^scenario\s+call\s+ended_by\s+slowest turn\s+checks$/);
      expect(lines[2]).to.match(/^ci short\s+1\s+agent\s+-\s+0\/1\s+FAIL$/);
      expect(lines[3]).to.equal(`  ✗ latency_under: no agent turn was measured (${CALLER_SIDE})`);
      expect(lines.join('\n')).not.to.contain(f.accesskey);
      lines.length = 0;
      expect(await runEvalFile(JSON.stringify({ scenarios: [scenario([])] }), o), lines.join('\n')).to.equal(0);
      lines.length = 0;
      expect(await runEvalFile(JSON.stringify({ scenarios: [scenario([{ type: 'nonsense' }])] }), o)).to.equal(2);
      expect(lines[0]).to.match(/^the platform refused or could not be reached: POST \/eval_scenarios: 400 INVALID_ARGUMENT/);
      expect(await runEvalFile('{"calls": 0}', o)).to.equal(2);
    } finally {
      await served.close();
    }
  });

  it('runs 2 calls at concurrency 2: transcript both ways, latency stages per turn, checks passing and failing with evidence', async () => {
    const scenario = await auth(request(t.app).post('/v1.0/eval_scenarios'))
      .send({
        name: 'opening hours',
        target: { type: 'number', target: NUMBER },
        caller: { language: 'en-US', turns: [{ wait_ms: 1000 }, { say: 'What are your opening hours?' }, { wait_ms: 9000 }, { dtmf: '1' }, { wait_ms: 500 }, { hangup: true }] },
        checks: [
          { type: 'transcript_contains', role: 'agent', text: 'open from nine' },
          { type: 'transcript_contains', role: 'caller', text: 'opening hours' },
          { type: 'transcript_not_contains', role: 'agent', text: 'we are closed' },
          { type: 'latency_under', ms: 10_000 },
          // deliberately wrong: the agent never says it
          { type: 'transcript_contains', role: 'agent', text: 'closed on sundays' },
        ],
      })
      .expect(200);
    const made = await auth(request(t.app).post('/v1.0/eval_runs'))
      .send({ scenario_ids: [scenario.body.id], calls: 2, concurrency: 2 })
      .expect(200);
    expect(made.body.status).to.equal('running');

    startWorker();
    const run = await ended(made.body.id as string);
    expect(run.status, run.error).to.equal('finished');
    expect(run.results).to.have.length(2);
    const callIds = new Set<string>();
    for (const r of run.results) {
      expect(r.scenario_id).to.equal(scenario.body.id);
      expect(r.ended_by).to.equal('caller');
      expect(r.call_id).to.match(/^[0-9a-f-]{36}$/);
      callIds.add(r.call_id);
      const call = await t.ctx.db('calls').where({ id: r.call_id }).first();
      expect(call).to.include({ customer_id: f.customer.id, sip_call_id: r.sip_call_id, direction: 'incoming' });
      // the digit went over RTP as an RFC 4733 event: the flow's call heard it
      expect((await endedFlowOfCall(r.call_id)).variables['svc.call.digits']).to.equal('1');

      const caller = r.transcript.filter((l) => l.role === 'caller');
      const agent = r.transcript.filter((l) => l.role === 'agent');
      expect(caller).to.have.length(1);
      expect(caller[0]!.text).to.equal('What are your opening hours?');
      expect(caller[0]!.t_ms).to.be.within(900, 2500);
      expect(
        agent.map((l) => l.text),
        JSON.stringify(r),
      ).to.include(ANSWER);
      expect(agent[0]!.t_ms).to.be.above(caller[0]!.t_ms);
      expect(r.transcript.map((l) => l.t_ms)).to.deep.equal([...r.transcript.map((l) => l.t_ms)].sort((a, b) => a - b));

      expect(r.turns.length).to.be.at.least(1);
      const turn = r.turns.find((x) => x.latency_ms !== null)!;
      for (const k of ['latency_ms', 'end_of_turn_wait_ms', 'stt_final_ms', 'llm_first_token_ms', 'tts_first_byte_ms'] as const) expect(turn[k], k).to.be.a('number').and.at.least(0);
      expect(turn.latency_ms!).to.be.at.least(turn.end_of_turn_wait_ms!);

      expect(r.checks.map((c) => [c.type, c.passed])).to.deep.equal([
        ['transcript_contains', true],
        ['transcript_contains', true],
        ['transcript_not_contains', true],
        ['latency_under', true],
        ['transcript_contains', false],
      ]);
      expect(r.checks[0]!.evidence).to.match(/^agent at \d+ ms: "We are open from nine/);
      expect(r.checks[3]!.evidence).to.match(/turn\(s\), the slowest \d+ ms/);
      expect(r.checks[4]!.evidence).to.match(/"closed on sundays" not in any of \d+ agent line\(s\)/);
      expect(r.passed).to.equal(false);
    }
    expect(callIds.size, 'two calls').to.equal(2);
    // concurrency 2: the two calls were up at the same time (each answered before the other hung up)
    const [a, b] = await t.ctx.db('calls').whereIn('id', [...callIds]);
    expect(a!.tm_progressing!.getTime(), 'the first answered before the second hung up').to.be.below(b!.tm_hangup!.getTime());
    expect(b!.tm_progressing!.getTime(), 'the second answered before the first hung up').to.be.below(a!.tm_hangup!.getTime());
    expect(run.pass_rate).to.equal(0);
  });
});
