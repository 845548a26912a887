// The goal caller end to end (issue 56, docs/evals.md "A goal caller"): an LLM plays the caller over
// real SIP and RTP through the platform's edge, against an ai_talk agent; the OpenAI-compatible
// stand-in is scripted as both (told apart by the caller's system prompt). The caller hears the agent
// through pocketsphinx with the scenario's phrases and answers what it heard: the transcript has the
// caller's generated lines and the agent's, the agent lines what the caller heard of them, and the
// caller ends the call through its goal_reached tool. Its LLM failing fails the call and the run,
// saying so; under the default egress policy its request to the stand-in on loopback is refused. A
// caller naming its LLM's AI configuration gets that one's vendor, never another customer's.
import { expect } from 'chai';
import { aisRepo } from '../../core/repos/ais';
import { egressPolicyFor, type EgressPolicy } from '../../core/net';
import { createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { lastUser, type LlmRequest, type LlmReply, type LlmServer } from '../../testkit/llm-server';
import type { Platform } from '../../testkit/media-app/harness';
import { aiTalkActions, evalRunEnded, numberWithFlow, postEvalRun, postEvalScenario, standInAi, startEvalWorker, useLiveEvals } from '../../testkit/evals/live';
import { GOAL_CALLER_PROMPT } from '../../evals/goal-caller';
import type { EvalCallResult } from '../../core/evals/schema';
import { attachHeard } from '../../evals/hearing';
import { callerLlm } from '../../evals/call-facts';

describe('evals hearing: what the caller heard goes beside the agent line it was', () => {
  it('a segment goes to the last agent line recorded before its end (+500 ms): records at a reply’s start or its end alike', () => {
    const agent = (text: string, t_ms: number) => ({ role: 'agent' as const, text, t_ms });
    const transcript = [agent('Hi.', 200), { role: 'caller' as const, text: 'Hours?', t_ms: 3000 }, agent('Nine.', 6400), agent('Bye.', 9000)];
    const heard = [
      { t_ms: 250, end_ms: 1500, text: 'hi' },
      // recorded once said: its line's time is after the segment started
      { t_ms: 5000, end_ms: 6300, text: 'nine' },
      { t_ms: 9050, end_ms: 9800, text: 'bye' },
      { t_ms: 12000, end_ms: 12500, text: 'more' },
    ];
    expect(attachHeard(transcript, heard)).to.deep.equal([
      { ...transcript[0], heard_text: 'hi', heard_t_ms: 250 },
      transcript[1],
      { ...transcript[2], heard_text: 'nine', heard_t_ms: 5000 },
      { ...transcript[3], heard_text: 'bye more', heard_t_ms: 9050 },
    ]);
    expect(attachHeard([agent('Hi.', 5000)], [{ t_ms: 100, end_ms: 900, text: 'early' }])).to.deep.equal([{ ...agent('Hi.', 5000), heard_text: '' }]);
  });
});

const GREETING = 'Hello, how can I help you?';
const ANSWER = 'We open at nine in the morning.';
const ASK = 'What are your opening hours?';
const BYE = 'Thank you, goodbye.';
const PHRASES = ['hello how can i help you', 'we open at nine in the morning', 'sorry go ahead'];

/** The caller: asks once it heard the offer of help, ends the call once it heard "nine"; the agent: greets, answers the question. */
function respond(req: LlmRequest): LlmReply {
  const system = req.messages[0]?.content ?? '';
  const heard = lastUser(req);
  if (system.startsWith(GOAL_CALLER_PROMPT)) {
    if (system.includes('FAIL-LLM')) return { status: 500 };
    if (heard.includes('nine')) return { text: BYE, tool_calls: [{ name: 'goal_reached', arguments: { reached: true, reason: 'they open at nine' } }] };
    return { text: heard.includes('help') ? ASK : 'Hello?' };
  }
  return heard.toLowerCase().includes('opening') ? { text: ANSWER } : heard ? { text: 'Sorry, go ahead.' } : { text: GREETING };
}

describe('evals goal caller over SIP: an LLM plays the caller, hearing through the platform recogniser', function () {
  this.timeout(150_000);
  let p: Platform;
  let llm: LlmServer;
  let t: TestApp;
  let f: Fixture;
  let workerEgress: EgressPolicy | undefined;
  const loopbackAllowed = egressPolicyFor({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
  const api = useLiveEvals('evals-goal-', respond, (s) => ({ p, llm, t, f } = s));

  /** A number whose flow is answer → ai_talk (the bakery on the stand-in, hearing the caller's lines by phrase) → hangup. */
  async function agent(number: string): Promise<void> {
    const ai = await standInAi(api, llm.url, {
      name: 'bakery',
      init_prompt: 'You are the bakery.',
      tool_names: [],
      parameter: { stt_phrases: [ASK.toLowerCase().replace('?', ''), 'hello', BYE.toLowerCase().replace(/[,.]/g, '')] },
    });
    await numberWithFlow(api, number, aiTalkActions(ai.id));
  }

  type Run = { status: string; error: string; results: EvalCallResult[] };
  /** A run of one scenario; the worker (re)started when the caller's egress policy is another than its. */
  async function runOf(number: string, caller: Record<string, unknown>, checks: unknown[], egress = loopbackAllowed): Promise<Run> {
    const scenarioId = await postEvalScenario(api, { name: 'goal', target: { type: 'number', target: number }, caller, checks });
    if (api.worker && workerEgress !== egress) {
      await api.worker.close();
      api.worker = undefined;
    }
    if (!api.worker) {
      api.worker = startEvalWorker(api, p, { config: { EVALS_AGENT_WAIT_MS: '10000' }, env: {}, egress });
      workerEgress = egress;
    }
    return evalRunEnded<Run>(api, await postEvalRun(api, { scenario_ids: [scenarioId] }));
  }

  const goal = { goal: 'Find out when the bakery opens.', persona: 'A hurried customer.', max_turns: 4, hear: { phrases: PHRASES } };

  it('the caller LLM asks what it heard the agent offer, hears the answer and ends the call: both sides in the transcript, what was heard beside them', async () => {
    await agent('+899572000001');
    const run = await runOf('+899572000001', goal, [
      { type: 'transcript_heard_contains', text: 'nine in the morning' },
      { type: 'transcript_heard_contains', text: 'closed on sunday' },
      { type: 'transcript_contains', role: 'agent', text: 'nine' },
      { type: 'ended_by', by: 'caller' },
    ]);
    expect(run.status, run.error).to.equal('finished');
    const r = run.results[0]!;
    const dump = JSON.stringify(r);
    expect(r.error, dump).to.equal(undefined);
    expect(r.goal, dump).to.deep.equal({ reached: true, turns: 2, reason: 'they open at nine' });
    // the caller's lines are what its LLM generated, in order, each after the agent line it answered
    const lines = r.transcript.map((l) => `${l.role}: ${l.text}`);
    expect(lines, dump).to.deep.equal([`agent: ${GREETING}`, `caller: ${ASK}`, `agent: ${ANSWER}`, `caller: ${BYE}`]);
    const [greeting, ask, answer, bye] = r.transcript;
    expect(greeting!.heard_text).to.equal('hello how can i help you');
    expect(answer!.heard_text).to.equal('we open at nine in the morning');
    // timed from the start of the heard audio: the answer after the caller's question, before its goodbye
    expect(greeting!.heard_t_ms!, dump).to.be.below(ask!.t_ms);
    expect(answer!.heard_t_ms!, dump).to.be.above(ask!.t_ms);
    expect(bye!.t_ms, dump).to.be.above(answer!.heard_t_ms!);
    expect(r.heard!.map((h) => h.t_ms)).to.deep.equal([greeting!.heard_t_ms, answer!.heard_t_ms]);
    expect(r.heard!.map((h) => h.text)).to.deep.equal(['hello how can i help you', 'we open at nine in the morning']);
    expect(r.checks.map((c) => [c.type, c.passed])).to.deep.equal([
      ['transcript_heard_contains', true],
      ['transcript_heard_contains', false],
      ['transcript_contains', true],
      ['ended_by', true],
    ]);
    expect(r.checks[0]!.evidence).to.match(/^heard at \d+ ms: "we open at nine in the morning"$/);
    expect(r.passed, dump).to.equal(false);
    // the caller LLM was told its goal and persona, and heard what the recogniser made of the agent
    const asked = llm.requests.filter((q) => q.messages[0]?.content?.startsWith(GOAL_CALLER_PROMPT));
    expect(asked).to.have.length(2);
    expect(asked[0]!.messages[0]!.content).to.contain('Your goal: Find out when the bakery opens.').and.contain('A hurried customer.');
    expect(asked[1]!.messages.slice(1).map((m) => `${m.role}: ${m.content}`)).to.deep.equal(['user: hello how can i help you', `assistant: ${ASK}`, 'user: we open at nine in the morning']);
    expect(asked[0]!.tools?.map((x) => x.function.name)).to.deep.equal(['goal_reached']);
  });

  it("the caller LLM failing fails the call and the run with the vendor's error, never a pass", async () => {
    await agent('+899572000002');
    const run = await runOf('+899572000002', { ...goal, persona: 'FAIL-LLM' }, [{ type: 'transcript_contains', role: 'agent', text: 'help' }]);
    const r = run.results[0]!;
    expect(run.status).to.equal('failed');
    expect(run.error).to.equal("the simulated caller failed on 1 of 1 call(s) (see each call's error)");
    expect(r.error, JSON.stringify(r)).to.match(/^the goal caller's LLM \(openai\.gpt-test\) failed: .*500/);
    expect(r.passed).to.equal(false);
    expect(r.goal).to.deep.include({ reached: false, turns: 0 });
    // the checks still ran on what happened: the agent's greeting was there
    expect(r.checks[0]!.passed, r.checks[0]!.evidence).to.equal(true);
    expect(r.transcript.filter((l) => l.role === 'caller')).to.deep.equal([]);
  });

  it('under the default egress policy the caller LLM on loopback is refused: the call fails saying so', async () => {
    await agent('+899572000003');
    const before = llm.requests.filter((q) => q.messages[0]?.content?.startsWith(GOAL_CALLER_PROMPT)).length;
    const run = await runOf('+899572000003', goal, [], egressPolicyFor({}));
    const r = run.results[0]!;
    expect(run.status).to.equal('failed');
    expect(r.error, JSON.stringify(r)).to.match(/^the goal caller's LLM \(openai\.gpt-test\) failed: .*(refused|not allowed|egress)/i);
    expect(r.passed).to.equal(false);
    // nothing reached the stand-in from the caller
    expect(llm.requests.filter((q) => q.messages[0]?.content?.startsWith(GOAL_CALLER_PROMPT)).length).to.equal(before);
  });

  it("a caller naming its LLM (llm.ai_id) gets that AI's vendor; another customer's AI or none on the call is an error saying so", async () => {
    const db = t.ctx.db;
    const deps = { db, env: {}, egress: loopbackAllowed };
    const mine = await aisRepo(db).create(f.customer.id, { name: 'caller', engine_model: 'openai.caller-model', engine_url: llm.url });
    const named = await callerLlm(deps, f.customer.id, { language: 'en-US', goal: 'x', llm: { ai_id: mine.id } })('no-such-call-id');
    if ('error' in named) throw new Error(named.error);
    expect(named.label).to.equal('openai.caller-model');
    const answer = await named.complete({
      messages: [
        { role: 'system', content: `${GOAL_CALLER_PROMPT}\nYour goal: x` },
        { role: 'user', content: 'hello how can i help you' },
      ],
    });
    expect(answer.content).to.equal(ASK);
    const other = await createFixture(t.ctx);
    const theirs = await aisRepo(db).create(other.customer.id, { name: 'theirs', engine_model: 'openai.gpt-test', engine_url: llm.url });
    expect(await callerLlm(deps, f.customer.id, { language: 'en-US', goal: 'x', llm: { ai_id: theirs.id } })('x')).to.deep.equal({ error: `no AI configuration ${theirs.id} of the customer's` });
    expect(await callerLlm(deps, f.customer.id, { language: 'en-US', goal: 'x' })('no-such-call-id')).to.deep.equal({ error: 'the call is not found on the platform by its Call-ID' });
  });
});
