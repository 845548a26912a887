// The talk-over turn and the new checks end to end (issue 56, docs/evals.md): simulated callers over
// SIP and RTP through the platform's edge against ai_talk agents on the OpenAI-compatible stand-in.
// A caller talks over a long greeting 1.5 s into it: an agent that may be cut is heard to stop within
// the budget (barge_in_within passes, with the measured ms), one with interruptible_greeting false
// talks on (the same check fails, the ms in its evidence); no_self_interruption passes (the cut
// reply had the caller's speech); the LLM judge asks the customer's vendor (the stand-in, scripted)
// and a malformed verdict fails. An agent scripted to call stop_flow hangs up: tool_called and
// ended_by agent pass, their opposites fail; one scripted to call connect_call is transferred.
import { expect } from 'chai';
import request from 'supertest';
import { egressPolicyFor } from '../../core/net';
import { lastUser, type LlmRequest, type LlmReply, type LlmServer } from '../../testkit/llm-server';
import { answeringUas, sipp, type Platform } from '../../testkit/media-app/harness';
import { freePort } from '../../testkit/ports';
import { aiTalkActions, evalRunEnded, numberWithFlow, postEvalRun, postEvalScenario, standInAi, startEvalWorker, useLiveEvals } from '../../testkit/evals/live';
import { JUDGE_PROMPT } from '../../evals/checks/judge';
import type { EvalCallResult } from '../../core/evals/schema';

const GREETING =
  'Welcome to the corner bakery, where we bake bread, rolls, cakes and pastries every single morning before sunrise, and deliver them to shops, cafes and homes all over the town, seven days a week.';
const STOP = 'Please stop talking now';
const REASON = 'The agent stopped talking when the caller asked it to.';

/** The stand-in's answers: the judge's verdicts by rubric, each agent's by the marker in its prompt. */
function respond(req: LlmRequest): LlmReply {
  const system = req.messages[0]?.content ?? '';
  if (system === JUDGE_PROMPT) {
    const rubric = req.messages[1]?.content ?? '';
    return rubric.includes('MALFORMED') ? { text: 'It went fine, I think.' } : { text: JSON.stringify({ passed: true, reason: REASON }) };
  }
  const last = req.messages.at(-1);
  if (system.includes('TOOLS-HANGUP')) return last?.role === 'tool' ? { text: '' } : { text: 'Goodbye.', tool_calls: [{ name: 'stop_flow', arguments: {} }] };
  if (system.includes('TOOLS-CONNECT')) {
    const target = /CONNECT-TO (\S+)/.exec(system)?.[1] ?? '';
    return last?.role === 'tool' ? { text: '' } : { text: 'Connecting you.', tool_calls: [{ name: 'connect_call', arguments: { destinations: [{ type: 'sip', target }] } }] };
  }
  return lastUser(req) ? { text: 'Sorry, go ahead.' } : { text: GREETING };
}

describe('eval checks over SIP: talk-over and barge-in, tools, endings, judge', function () {
  this.timeout(150_000);
  let p: Platform;
  let llm: LlmServer;
  const api = useLiveEvals('evals-checks-', respond, (s) => ({ p, llm } = s));

  /** A number whose flow is answer → ai_talk with an AI (prompt `prompt`, `parameter` over the phrases) → hangup. */
  async function agent(number: string, prompt: string, parameter: Record<string, unknown> = {}): Promise<void> {
    const ai = await standInAi(api, llm.url, { init_prompt: prompt, parameter: { stt_phrases: [STOP.toLowerCase()], ...parameter } });
    await numberWithFlow(api, number, aiTalkActions(ai.id));
  }

  type Run = { status: string; error: string; results: EvalCallResult[] };
  async function runOf(number: string, turns: unknown[], checks: unknown[]): Promise<EvalCallResult> {
    const scenarioId = await postEvalScenario(api, { name: 'checks', target: { type: 'number', target: number }, caller: { turns }, checks });
    const runId = await postEvalRun(api, { scenario_ids: [scenarioId] });
    // the judge reaches the customer's vendor (the stand-in on loopback) through this policy
    api.worker ??= startEvalWorker(api, p, { config: { EVALS_AGENT_WAIT_MS: '10000' }, env: {}, egress: egressPolicyFor({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }) });
    const run = await evalRunEnded<Run>(api, runId);
    expect(run.status, run.error).to.equal('finished');
    return run.results[0]!;
  }

  it('the OpenAPI document has each new check and the talk-over field', async () => {
    const doc = JSON.stringify((await request(api.t.app).get('/v1.0/openapi.json').expect(200)).body);
    for (const type of ['barge_in_within', 'no_self_interruption', 'tool_called', 'ended_by', 'transferred', 'judge']) {
      expect(doc.split(`"const":"${type}"`).length - 1 || doc.split(`"enum":["${type}"]`).length - 1, type).to.be.at.least(1);
    }
    expect(doc).to.contain('"after_agent_ms"');
    expect(doc).to.contain('"rubric"');
    // the result's timeline fields, from the one schema
    for (const field of ['"tool_calls"', '"interruptions"', '"silences"', '"agent_stopped_after_ms"', '"duration_ms"']) expect(doc).to.contain(field);
  });

  // the wait leaves the recogniser time for the words even on a loaded machine (the cut comes after them)
  const talkOver = [{ say: STOP, after_agent_ms: 1500 }, { wait_ms: 7000 }, { hangup: true }];
  const stoppedMs = (evidence: string) => Number(/the agent stopped (\d+) ms later/.exec(evidence)?.[1]);

  it('barge-in honoured: the agent heard stopping within the budget, no self-interruption, the judge’s verdict and a malformed one', async () => {
    await agent('+899571000001', 'You are the bakery. BARGE-OK');
    const r = await runOf('+899571000001', talkOver, [
      { type: 'barge_in_within', ms: 1500 },
      { type: 'no_self_interruption' },
      { type: 'judge', rubric: 'The agent stops talking when the caller asks it to.' },
      { type: 'judge', rubric: 'MALFORMED: anything' },
      { type: 'ended_by', by: 'caller' },
    ]);
    const [barge, self, verdict, malformed, ended] = r.checks;
    expect(barge!.passed, barge!.evidence).to.equal(true);
    expect(barge!.evidence).to.match(/^talk-over at \d+ ms \(the agent talking since \d+ ms\): the agent stopped \d+ ms later$/);
    const talk = r.transcript.find((l) => l.role === 'caller')!;
    expect(talk.text).to.equal(STOP);
    const since = Number(/talking since (\d+) ms/.exec(barge!.evidence)![1]);
    // the caller started 1.5 s into the greeting as it heard it
    expect(talk.t_ms - since).to.be.within(1480, 1700);
    expect(stoppedMs(barge!.evidence)).to.be.at.most(1500);
    // the result's interruptions: the caller's talk-over over the greeting, the agent stopping by the check's measure
    const over = r.interruptions!.filter((i) => i.by === 'caller');
    expect(over, JSON.stringify(r.interruptions)).to.have.length(1);
    expect(over[0]).to.deep.include({ t_ms: talk.t_ms, agent_from_ms: since, agent_stopped_after_ms: stoppedMs(barge!.evidence), agent_stopped: true, agent_resumed_ms: null });
    expect(over[0]!.caller_end_ms).to.be.above(talk.t_ms + 500);
    // the 7 s wait after the agent's answer to the talk-over: dead air on both sides until the caller's hangup
    const last = r.silences!.at(-1)!;
    expect(last, JSON.stringify(r.silences)).to.deep.include({ after: 'agent', before: 'end' });
    expect(last.duration_ms).to.be.within(2001, 7000);
    expect(r.silences!.every((g) => g.duration_ms > 2000 && !r.transcript.some((l) => l.role === 'caller' && l.t_ms > g.t_ms && l.t_ms < g.t_ms + g.duration_ms))).to.equal(true);
    expect(r.tool_calls).to.deep.equal([]);
    expect(self, JSON.stringify({ ...r, checks: r.checks })).to.deep.include({ passed: true });
    expect(self!.evidence, JSON.stringify(r)).to.match(/^\d+ reply\(ies\), [1-9]\d* cut, each while the caller spoke$/);
    expect(verdict).to.deep.equal({ type: 'judge', passed: true, evidence: REASON });
    expect(malformed).to.deep.equal({ type: 'judge', passed: false, evidence: 'the judge\'s answer is no verdict: the model did not answer with a JSON verdict; it said "It went fine, I think."' });
    expect(ended, ended!.evidence).to.deep.include({ passed: true });
    // the judge got the call's transcript, the caller's talk-over in it
    const asked = llm.requests.filter((q) => q.messages[0]?.content === JUDGE_PROMPT && !(q.messages[1]?.content ?? '').includes('MALFORMED')).at(-1)!;
    expect(asked.messages[1]!.content).to.contain(`caller: ${STOP}`);
    expect(asked.messages[1]!.content).to.contain('agent: Welcome to the corner bakery');
  });

  it('barge-in not allowed (interruptible_greeting false): the agent talks on, the same check fails with the measured ms', async () => {
    await agent('+899571000002', 'You are the bakery. BARGE-NO', { interruptible_greeting: false });
    const r = await runOf('+899571000002', talkOver, [{ type: 'barge_in_within', ms: 1500 }]);
    const [barge] = r.checks;
    expect(barge!.passed, barge!.evidence).to.equal(false);
    expect(barge!.evidence).to.match(/^talk-over at \d+ ms \(the agent talking since \d+ ms\): the agent stopped \d+ ms later/);
    // the greeting went on for seconds after the caller started
    expect(stoppedMs(barge!.evidence)).to.be.above(3000);
    const over = r.interruptions!.filter((i) => i.by === 'caller');
    expect(over, JSON.stringify(r.interruptions)).to.have.length(1);
    expect(over[0]).to.deep.include({ agent_stopped_after_ms: stoppedMs(barge!.evidence), agent_stopped: false });
  });

  it('an agent that calls stop_flow: tool_called and ended_by agent pass; other arguments, ended_by caller, transferred fail', async () => {
    await agent('+899571000003', 'TOOLS-HANGUP');
    const r = await runOf(
      '+899571000003',
      [{ wait_ms: 10_000 }, { hangup: true }],
      [
        { type: 'tool_called', name: 'stop_flow' },
        { type: 'tool_called', name: 'stop_flow', arguments: { reason: 'other' } },
        { type: 'tool_called', name: 'connect_call' },
        { type: 'ended_by', by: 'agent' },
        { type: 'ended_by', by: 'caller' },
        { type: 'transferred' },
        { type: 'no_self_interruption' },
      ],
    );
    expect(r.ended_by).to.equal('agent');
    expect(r.checks.map((c) => [c.type, c.passed])).to.deep.equal([
      ['tool_called', true],
      ['tool_called', false],
      ['tool_called', false],
      ['ended_by', true],
      ['ended_by', false],
      ['transferred', false],
      ['no_self_interruption', true],
    ]);
    expect(r.checks[0]!.evidence).to.match(/^stop_flow called at \d+ ms with \{\}$/);
    // the result's tool_calls: the same call the check read, with the result ai_talk recorded for it
    expect(r.tool_calls, JSON.stringify(r.tool_calls)).to.have.length(1);
    const [tool] = r.tool_calls!;
    expect(tool).to.deep.include({ name: 'stop_flow', arguments: {}, t_ms: Number(/at (\d+) ms/.exec(r.checks[0]!.evidence)![1]), result: 'the call will end' });
    expect(tool!.id).to.be.a('string').and.not.equal('');
    // the caller never spoke: no interruption
    expect(r.interruptions).to.deep.equal([]);
    expect(r.checks[1]!.evidence).to.equal('stop_flow called 1 time(s), none with arguments matching {"reason":"other"}: {}');
    expect(r.checks[2]!.evidence).to.equal('no call of connect_call among 1 tool call(s): stop_flow');
    expect(r.checks[3]!.evidence).to.match(/^the call's record: hung up by agent \(hangup_by local, /);
    expect(r.checks[5]!.evidence).to.equal('no transfer of the call and no leg it was connected to');
  });

  it('an agent that calls connect_call: transferred passes naming the leg; the arguments match as a subset', async () => {
    const uasPort = await freePort();
    await agent('+899571000004', `TOOLS-CONNECT CONNECT-TO agent@127.0.0.1:${uasPort}`);
    const uas = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(uasPort), '-m', '1', '-timeout', '50s'], { killAfterMs: 60_000 });
    const r = await runOf(
      '+899571000004',
      [{ wait_ms: 6000 }, { hangup: true }],
      [{ type: 'transferred' }, { type: 'tool_called', name: 'connect_call', arguments: { destinations: [{ type: 'sip' }] } }],
    );
    const u = await uas.done;
    expect(u.code, u.errors + u.messages).to.equal(0);
    expect(r.checks[0]!.passed, r.checks[0]!.evidence).to.equal(true);
    expect(r.checks[0]!.evidence).to.match(new RegExp(`^connected to call [0-9a-f-]{36} \\(sip agent@127\\.0\\.0\\.1:${uasPort}\\)$`));
    expect(r.checks[1]!.passed, r.checks[1]!.evidence).to.equal(true);
  });
});
