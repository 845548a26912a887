// One scenario, three kinds of agent (issue 56, docs/evals.md "Agent kinds"): an ai_talk agent on the
// OpenAI-compatible stand-in, a ConversationRelay app and a Media Streams app (testkit/evals/agent-apps.ts,
// real WebSocket servers on loopback), each behind a number whose TwiML comes from a real HTTP server on
// loopback through the egress policy. The same simulated caller (over SIP and RTP through the edge)
// talks over the greeting, waits for the answer, presses a digit and hangs up, hearing the agent through
// pocketsphinx. What the caller heard and the barge-in pass for all three; the latency stages are the
// platform's only for ai_talk, the agent's text for ai_talk and the ConversationRelay app (the replies it
// sent, relay_lines): for the Media Streams app the checks on the agent's text fail saying why
// (evals/agent-kind.ts), transcript_not_contains too; the apps' turns are measured at the caller
// (evals/caller-turns.ts): each app answers after a known delay, which its turn is at least.
import { expect } from 'chai';
import twilio from 'twilio';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { egressPolicyFor } from '../../core/net';
import type { Fixture } from '../../testkit/api';
import { lastUser, type LlmReply, type LlmRequest, type LlmServer } from '../../testkit/llm-server';
import type { Platform } from '../../testkit/media-app/harness';
import { aiTalkActions, evalRunEnded, numberWithFlow, postEvalRun, postEvalScenario, standInAi, startEvalWorker, useLiveEvals } from '../../testkit/evals/live';
import { TwimlServer } from '../../testkit/twiml/server';
import type { RelayApp } from '../../testkit/twiml/relay-app';
import { relayAgent, streamsAgent, type Brain, type StreamsAgent } from '../../testkit/evals/agent-apps';
import { CALLER_SIDE, NO_AI_TALK, RELAY_TEXT } from '../../evals/agent-kind';
import type { EvalCallResult } from '../../core/evals/schema';
import { ANSWER, ASK, bakeryScenario, DIGIT, GREETING } from '../../testkit/evals/bakery';

const brain: Brain = { greeting: GREETING, answer: () => ANSWER, digit: (d) => (d === '1' ? DIGIT : 'Sorry?') };
/** The ConversationRelay app thinks this long before each answer; the Media Streams app waits this long of the caller's silence before taking its turn. */
const RELAY_DELAY_MS = 1500;
const STREAMS_END_OF_TURN_MS = 700;
/** What a turn measured at the caller may add to the app's own delay: the platform's recogniser finalising (ConversationRelay), the voice, RTP both ways. */
const TURN_SLACK_MS = 3000;

/** The ai_talk agent's LLM: the greeting, then the answer to whatever it heard. */
const respond = (req: LlmRequest): LlmReply => ({ text: lastUser(req) ? ANSWER : GREETING });

/** The scenario all three run. */
const SCENARIO = (number: string) =>
  bakeryScenario('kinds', number, [
    { type: 'transcript_heard_contains', text: 'open from nine' },
    { type: 'barge_in_within', ms: 2000 },
    { type: 'ended_by', by: 'caller' },
    { type: 'transcript_heard_contains', text: 'pressed one' },
    { type: 'transcript_contains', role: 'agent', text: 'open from nine' },
    { type: 'latency_under', ms: 5000 },
    { type: 'transcript_not_contains', role: 'agent', text: 'we are closed' },
    // words no agent says: fails on every kind
    { type: 'transcript_contains', role: 'agent', text: 'we are closed' },
  ]);

describe('evals: the same scenario against ai_talk, a ConversationRelay app and a Media Streams app', function () {
  this.timeout(240_000);
  let p: Platform;
  let llm: LlmServer;
  let f: Fixture;
  let twiml: TwimlServer;
  let relay: RelayApp;
  let streams: StreamsAgent;
  const api = useLiveEvals('evals-kinds-', respond, (s) => ({ p, llm, f } = s));

  before(async () => {
    const token = twilioAuthToken(p.config.jwtSecret, f.customer.id, 0);
    twiml = await TwimlServer.start(token);
    relay = await relayAgent(token, brain, RELAY_DELAY_MS);
    streams = await streamsAgent(brain, STREAMS_END_OF_TURN_MS);
  });
  after(async () => {
    await relay?.close();
    await streams?.close();
    await twiml?.close();
  });

  const numberWith = (number: string, actions: unknown[]) => numberWithFlow(api, number, actions);

  type Run = { status: string; error: string; results: EvalCallResult[] };
  async function runOf(number: string): Promise<EvalCallResult> {
    const runId = await postEvalRun(api, { scenario_ids: [await postEvalScenario(api, SCENARIO(number))] });
    api.worker ??= startEvalWorker(api, p, { config: { EVALS_AGENT_WAIT_MS: '15000' }, env: {}, egress: egressPolicyFor({}) });
    const run = await evalRunEnded<Run>(api, runId, 120_000);
    expect(run.status, run.error).to.equal('finished');
    return run.results[0]!;
  }

  const verdicts = (r: EvalCallResult) => r.checks.map((c) => [c.type, c.passed]);
  const shown = (r: EvalCallResult) => JSON.stringify({ checks: r.checks, heard: r.heard, transcript: r.transcript, turns: r.turns, streams: streams.log });
  /** The checks every kind passes: heard the answer, cut by the talk-over, hung up by the caller. */
  function common(r: EvalCallResult): void {
    expect(verdicts(r).slice(0, 3), shown(r)).to.deep.equal([
      ['transcript_heard_contains', true],
      ['barge_in_within', true],
      ['ended_by', true],
    ]);
    expect(r.transcript.filter((l) => l.role === 'caller').map((l) => l.text)).to.deep.equal([ASK]);
  }
  /**
   * An app outside the platform: its turns (the question's answer, the digit's) measured at the caller, the
   * answer at least the app's known delay `answerMs` and the digit's at least `digitMs`, each within
   * TURN_SLACK_MS of it. The checks on the agent's text: judged on the ConversationRelay app's replies
   * (`relay`), else failing saying why.
   */
  function external(r: EvalCallResult, answerMs: number, digitMs: number, relay: boolean): void {
    expect(
      r.turns.map((x) => [x.measured, x.interrupted]),
      shown(r),
    ).to.deep.equal([
      ['caller', false],
      ['caller', false],
    ]);
    const [answer, digit] = r.turns.map((x) => x.latency_ms!);
    expect(answer, shown(r))
      .to.be.at.least(answerMs)
      .and.below(answerMs + TURN_SLACK_MS);
    expect(digit, shown(r))
      .to.be.at.least(digitMs)
      .and.below(digitMs + TURN_SLACK_MS);
    const latency = { type: 'latency_under', passed: true, evidence: `2 turn(s), the slowest ${Math.max(answer!, digit!)} ms (${CALLER_SIDE})` };
    if (relay) {
      const answerLine = r.transcript.find((l) => l.role === 'agent' && l.text === ANSWER)!;
      expect(r.checks.slice(4), shown(r)).to.deep.equal([
        { type: 'transcript_contains', passed: true, evidence: `agent at ${answerLine.t_ms} ms: "${ANSWER}" (${RELAY_TEXT})` },
        latency,
        { type: 'transcript_not_contains', passed: true, evidence: `"we are closed" in no agent line (${RELAY_TEXT})` },
        { type: 'transcript_contains', passed: false, evidence: `"we are closed" not in any of 3 agent line(s) (${RELAY_TEXT})` },
      ]);
      return;
    }
    expect(r.transcript.filter((l) => l.role === 'agent')).to.deep.equal([]);
    expect(r.checks.slice(4)).to.deep.equal([
      { type: 'transcript_contains', passed: false, evidence: `"open from nine" not in any of 0 agent line(s) (${NO_AI_TALK})` },
      latency,
      // nothing to judge is no pass, even for a check that a silent agent would otherwise pass
      { type: 'transcript_not_contains', passed: false, evidence: `"we are closed" in no agent line (${NO_AI_TALK})` },
      { type: 'transcript_contains', passed: false, evidence: `"we are closed" not in any of 0 agent line(s) (${NO_AI_TALK})` },
    ]);
  }

  it('ai_talk: everything but the digit (ai_talk does not take digits); its text and latency stages recorded', async () => {
    const ai = await standInAi(api, llm.url, { name: 'bakery', init_prompt: 'You are the bakery.', tool_names: [], parameter: { stt_phrases: [ASK.toLowerCase().replace('?', '')] } });
    await numberWith('+899573000001', aiTalkActions(ai.id));
    const r = await runOf('+899573000001');
    common(r);
    expect(verdicts(r).slice(3), shown(r)).to.deep.equal([
      ['transcript_heard_contains', false],
      ['transcript_contains', true],
      ['latency_under', true],
      ['transcript_not_contains', true],
      ['transcript_contains', false],
    ]);
    expect(r.turns.length).to.be.at.least(2);
    expect(
      r.turns.some((x) => x.latency_ms !== null),
      shown(r),
    ).to.equal(true);
  });

  it('a ConversationRelay app: setup, interrupt, prompt and dtmf reach it; the caller hears both answers; its replies are the agent lines', async () => {
    const doc = new twilio.twiml.VoiceResponse();
    doc.connect().conversationRelay({ url: relay.url('/relay'), welcomeGreeting: GREETING, interruptible: 'any', dtmfDetection: true, hints: ASK.toLowerCase().replace('?', '') });
    twiml.on('/relay', doc.toString());
    await numberWith('+899573000002', [{ type: 'answer' }, { type: 'twiml', option: { url: twiml.url('/relay') } }]);
    const r = await runOf('+899573000002');
    common(r);
    expect(r.checks[3], shown(r)).to.deep.include({ passed: true });
    external(r, RELAY_DELAY_MS, RELAY_DELAY_MS, true);
    // the app's own words, one line per reply (its tokens joined), timed from the answer; the greeting cut by the talk-over
    const lines = r.transcript.map((l) => [l.role, l.text, l.interrupted]);
    expect(lines, shown(r)).to.deep.equal([
      ['agent', GREETING, true],
      ['caller', ASK, undefined],
      ['agent', ANSWER, false],
      ['agent', DIGIT, false],
    ]);
    const [greeting, ask, answer] = r.transcript;
    expect(greeting!.t_ms, shown(r)).to.be.at.least(0).and.below(ask!.t_ms);
    // the app answers RELAY_DELAY_MS after the prompt, which comes once the caller has said the question
    expect(answer!.t_ms - ask!.t_ms, shown(r)).to.be.at.least(RELAY_DELAY_MS);
    expect(answer!.heard_text, shown(r)).to.contain('open from nine');
    const s = relay.sessions.find((x) => x.path === '/relay')!;
    expect(s.signed, 'X-Twilio-Signature on the upgrade').to.equal(true);
    expect(s.messages.map((m) => m.type)).to.include.members(['setup', 'interrupt', 'prompt', 'dtmf']);
    expect((await twiml.next('/relay')).signed).to.equal(true);
  });

  it('a Media Streams app with its own agent loop: it hears the caller, clears its audio when talked over, answers the digit', async () => {
    const doc = new twilio.twiml.VoiceResponse();
    doc.connect().stream({ url: streams.app.url });
    twiml.on('/streams', doc.toString());
    await numberWith('+899573000003', [{ type: 'answer' }, { type: 'twiml', option: { url: twiml.url('/streams') } }]);
    const r = await runOf('+899573000003');
    common(r);
    expect(r.checks[3], shown(r)).to.deep.include({ passed: true });
    // the Media Streams app answers a digit at once
    external(r, STREAMS_END_OF_TURN_MS, 0, false);
    expect(streams.log.slice(0, 3)).to.deep.equal([`say ${GREETING}`, 'clear', `say ${ANSWER}`]);
    expect(streams.log).to.include(`say ${DIGIT}`);
  });
});
