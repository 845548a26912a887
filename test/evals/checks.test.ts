// The checks added for issue 56's talk-over, tools, endings and judge, on facts made by hand: the
// heard audio's utterances and cuts, barge_in_within and no_self_interruption with their evidence,
// tool_called's subset match, ended_by and transferred from the call's record; the LLM judge
// against the OpenAI-compatible stand-in over real HTTP through the egress policy (a verdict, a
// malformed answer, a vendor error, an egress refusal: only a verdict can pass).
import { expect } from 'chai';
import { getEventListeners } from 'node:events';
import type { ChatLlm } from '../../core/llm/client';
import { bargeInWithin, noSelfInterruption } from '../../evals/checks/audio';
import type { CallFacts } from '../../evals/checks/facts';
import { cutAfter, utteranceAt, type HeardPacket } from '../../evals/checks/heard';
import { judgeCall, parseVerdict, JUDGE_PROMPT } from '../../evals/checks/judge';
import { endedBy, subsetMatch, toolCalled, transferred } from '../../evals/checks/records';
import { evalScenarioInput } from '../../core/evals/schema';
import { llmFor } from '../../core/llm/endpoint';
import { egressPolicyFor } from '../../core/net';
import { startLlmServer, type LlmServer } from '../../testkit/llm-server';

/** 20 ms packets from `from` to `to` (ms), voiced (level 2000) where `voiced` says. */
function heard(to: number, voiced: (t: number) => boolean): HeardPacket[] {
  const out: HeardPacket[] = [];
  for (let t = 0; t < to; t += 20) out.push({ t_ms: t, level: voiced(t) ? 2000 : 0 });
  return out;
}

function facts(o: Partial<CallFacts>): CallFacts {
  return {
    transcript: [],
    turns: [],
    replies: [],
    callerSpeech: [],
    talkOvers: [],
    talkOversSkipped: 0,
    heard: [],
    end_ms: 10_000,
    heardSegments: null,
    toolCalls: [],
    callEnd: null,
    vendor: () => Promise.resolve({ error: 'no vendor in this test' }),
    ...o,
  };
}

describe('evals checks: talk-over, barge-in, self-interruption, tools, endings, judge', () => {
  // the agent talks 1000-6000 ms with 300 ms pauses between sentences every 1500 ms
  const talking = (t: number) => t >= 1000 && t < 6000 && (t - 1000) % 1500 < 1200;

  it('heard: an utterance spans pauses under 1 s; at a time of silence there is none', () => {
    const h = heard(8000, talking);
    expect(utteranceAt(h, 500)).to.equal(null);
    expect(utteranceAt(h, 1100)).to.equal(1000);
    expect(utteranceAt(h, 4300), 'inside a 300 ms pause').to.equal(1000);
    expect(utteranceAt(h, 6500), 'less than 1 s after its end').to.equal(1000);
    expect(utteranceAt(h, 7100)).to.equal(null);
    expect(cutAfter(h, 2000, 3000)).to.deep.equal({ talking: true, since: 1000, ms: 3980, resumedAt: null });
  });

  it('barge_in_within: the stop measured from the talk-over start; over budget, resumed, not talking, no talk-over all fail', () => {
    const cutAt2600 = heard(8000, (t) => t >= 1000 && t < 2600);
    const over = { t_ms: 2000, end_ms: 3500, after_agent_ms: 1000, agent_from_ms: 1000 };
    expect(bargeInWithin(800, facts({ heard: cutAt2600, talkOvers: [over] }))).to.deep.equal({
      type: 'barge_in_within',
      passed: true,
      evidence: 'talk-over at 2000 ms (the agent talking since 1000 ms): the agent stopped 580 ms later',
    });
    expect(bargeInWithin(500, facts({ heard: cutAt2600, talkOvers: [over] })).passed).to.equal(false);
    // talked on to its end: 3980 ms
    const r = bargeInWithin(1500, facts({ heard: heard(8000, talking), talkOvers: [over] }));
    expect(r).to.deep.include({ passed: false, evidence: 'talk-over at 2000 ms (the agent talking since 1000 ms): the agent stopped 3980 ms later' });
    // silenced, then heard again while the caller still speaks
    const resumed = heard(8000, (t) => (t >= 1000 && t < 2200) || (t >= 3300 && t < 4000));
    expect(bargeInWithin(800, facts({ heard: resumed, talkOvers: [{ ...over, end_ms: 3600 }] })).evidence).to.equal(
      'talk-over at 2000 ms (the agent talking since 1000 ms): the agent stopped 180 ms later, then was heard again at 3300 ms while the caller still spoke',
    );
    expect(bargeInWithin(800, facts({ heard: resumed, talkOvers: [{ ...over, end_ms: 3600 }] })).passed).to.equal(false);
    expect(bargeInWithin(800, facts({ heard: cutAt2600, talkOvers: [{ ...over, t_ms: 4000 }] }))).to.deep.include({
      passed: false,
      evidence: 'talk-over at 4000 ms: the agent was no longer heard (nothing to cut)',
    });
    expect(bargeInWithin(800, facts({ talkOversSkipped: 1 }))).to.deep.equal({
      type: 'barge_in_within',
      passed: false,
      evidence: 'the caller never talked over the agent (1 talk-over turn(s) skipped: the agent was not heard)',
    });
  });

  it('no_self_interruption: a cut reply needs caller speech between its neighbours; no reply at all fails', () => {
    const replies = [
      { t_ms: 300, interrupted: true },
      { t_ms: 4000, interrupted: false },
      { t_ms: 9000, interrupted: true },
    ];
    const r = noSelfInterruption(facts({ replies, callerSpeech: [{ t_ms: 2000, end_ms: 3000 }] }));
    expect(r).to.deep.equal({ type: 'no_self_interruption', passed: false, evidence: 'reply 3 (recorded at 9000 ms) was cut with no caller speech between 4000 ms and the end' });
    expect(
      noSelfInterruption(
        facts({
          replies,
          callerSpeech: [
            { t_ms: 2000, end_ms: 3000 },
            { t_ms: 9500, end_ms: 9900 },
          ],
        }),
      ),
    ).to.deep.equal({
      type: 'no_self_interruption',
      passed: true,
      evidence: '3 reply(ies), 2 cut, each while the caller spoke',
    });
    expect(noSelfInterruption(facts({}))).to.deep.equal({ type: 'no_self_interruption', passed: false, evidence: 'no agent reply was recorded' });
  });

  it('tool_called: by name, arguments a subset (nested objects, arrays element by element); the evidence names what was called', () => {
    expect(subsetMatch({ a: 1, b: { c: 'x' } }, { a: 1, b: { c: 'x', d: 2 }, e: 3 })).to.equal(true);
    expect(subsetMatch({ a: [{ t: 'sip' }] }, { a: [{ t: 'sip', u: 1 }] })).to.equal(true);
    expect(subsetMatch({ a: [{ t: 'sip' }] }, { a: [{ t: 'sip' }, { t: 'tel' }] })).to.equal(false);
    expect(subsetMatch({ a: '1' }, { a: 1 })).to.equal(false);
    expect(subsetMatch({ a: null }, {})).to.equal(false);
    const toolCalls = [
      { id: 'c1', name: 'set_variables', arguments: { variables: { 'customer.plan': 'gold', x: '1' } }, t_ms: 2100, result: 'ok' },
      { id: 'c2', name: 'stop_flow', arguments: {}, t_ms: 5000, result: null },
    ];
    const f = facts({ toolCalls });
    expect(toolCalled('set_variables', { variables: { 'customer.plan': 'gold' } }, f)).to.deep.equal({
      type: 'tool_called',
      passed: true,
      evidence: 'set_variables called at 2100 ms with {"variables":{"customer.plan":"gold","x":"1"}}',
    });
    expect(toolCalled('set_variables', { variables: { 'customer.plan': 'silver' } }, f)).to.deep.equal({
      type: 'tool_called',
      passed: false,
      evidence: 'set_variables called 1 time(s), none with arguments matching {"variables":{"customer.plan":"silver"}}: {"variables":{"customer.plan":"gold","x":"1"}}',
    });
    expect(toolCalled('stop_flow', undefined, f).passed).to.equal(true);
    expect(toolCalled('connect_call', undefined, f).evidence).to.equal('no call of connect_call among 2 tool call(s): set_variables, stop_flow');
    expect(toolCalled('connect_call', undefined, facts({})).evidence).to.equal('no tool was called (looking for connect_call)');
  });

  it("ended_by and transferred: from the call's record (hangup_by local is the agent); no record is no pass", () => {
    const end = { hangup_by: 'local', hangup_reason: 'normal', connected: [], transfers: [] };
    expect(endedBy('agent', facts({ callEnd: end }))).to.deep.equal({ type: 'ended_by', passed: true, evidence: "the call's record: hung up by agent (hangup_by local, hangup_reason normal)" });
    expect(endedBy('caller', facts({ callEnd: end })).passed).to.equal(false);
    expect(endedBy('caller', facts({ callEnd: { ...end, hangup_by: 'remote' } })).passed).to.equal(true);
    expect(endedBy('agent', facts({ callEnd: { ...end, hangup_by: '' } }))).to.deep.equal({ type: 'ended_by', passed: false, evidence: 'the call has no hangup recorded' });
    expect(transferred(facts({ callEnd: end }))).to.deep.equal({ type: 'transferred', passed: false, evidence: 'no transfer of the call and no leg it was connected to' });
    const leg = { id: 'c2', destination: { type: 'sip', target: 'agent@127.0.0.1:5099' }, answered: true };
    expect(transferred(facts({ callEnd: { ...end, connected: [leg] } }))).to.deep.equal({ type: 'transferred', passed: true, evidence: 'connected to call c2 (sip agent@127.0.0.1:5099)' });
    expect(transferred(facts({ callEnd: { ...end, connected: [{ ...leg, answered: false }] } }))).to.deep.equal({
      type: 'transferred',
      passed: false,
      evidence: 'dialled, never answered: call c2 (sip agent@127.0.0.1:5099)',
    });
    const failed = { ...end, transfers: [{ id: 't1', type: 'blind', status: 'failed', transferee_addresses: [{ type: 'tel', target: '+15550001' }] }] };
    expect(transferred(facts({ callEnd: failed }))).to.deep.equal({ type: 'transferred', passed: false, evidence: 'transfer t1 (blind, failed) to tel +15550001' });
    expect(transferred(facts({}))).to.deep.equal({ type: 'transferred', passed: false, evidence: 'the call was not found' });
  });

  it('the scenario schema takes each new check and a talk-over turn, and refuses a bad one naming it', () => {
    const base = { name: 'x', target: { type: 'number', target: '+899570000001' }, caller: { turns: [{ say: 'stop', after_agent_ms: 1500 }] } };
    const checks = [
      { type: 'barge_in_within', ms: 800 },
      { type: 'no_self_interruption' },
      { type: 'tool_called', name: 'stop_flow', arguments: { reason: 'done' } },
      { type: 'ended_by', by: 'agent' },
      { type: 'transferred' },
      { type: 'judge', rubric: 'The agent was polite.' },
    ];
    expect(evalScenarioInput.parse({ ...base, checks }).checks).to.deep.equal(checks);
    for (const bad of [{ type: 'barge_in_within' }, { type: 'ended_by', by: 'nobody' }, { type: 'judge', rubric: ' ' }, { type: 'tool_called', name: 'x', arguments: [] }]) {
      expect(evalScenarioInput.safeParse({ ...base, checks: [bad] }).success, JSON.stringify(bad)).to.equal(false);
    }
    expect(evalScenarioInput.safeParse({ ...base, caller: { turns: [{ say: 'x', after_agent_ms: -1 }] } }).success).to.equal(false);
  });

  describe('judge, against the OpenAI-compatible stand-in', () => {
    let llm: LlmServer;
    let answer = '';
    before(async () => {
      llm = await startLlmServer({ respond: () => (answer === '500' ? { status: 500 } : { text: answer }) });
    });
    after(() => llm.close());
    const vendor =
      (policy = egressPolicyFor({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' })) =>
      () =>
        Promise.resolve(llmFor({ engine_model: 'openai.judge', engine_url: llm.url }, {}, policy));
    const transcript = [
      { role: 'caller' as const, text: 'Stop please.', t_ms: 2100 },
      { role: 'agent' as const, text: 'Sorry, go ahead.', t_ms: 4000 },
    ];
    const o = { timeoutMs: 5000, signal: new AbortController().signal };

    it('a verdict passes or fails with its reason as evidence; the vendor got the rubric and the transcript', async () => {
      answer = '```json\n{"passed": true, "reason": "The agent stopped and let the caller speak."}\n```';
      expect(await judgeCall('The agent yields when cut off.', facts({ transcript, vendor: vendor() }), o)).to.deep.equal({
        type: 'judge',
        passed: true,
        evidence: 'The agent stopped and let the caller speak.',
      });
      const req = llm.requests.at(-1)!;
      expect(req.messages[0]).to.deep.include({ role: 'system', content: JUDGE_PROMPT });
      expect(req.messages[1]!.content).to.equal(
        'Rubric: The agent yields when cut off.\n\nTranscript (ms after the call was answered):\n[2100 ms] caller: Stop please.\n[4000 ms] agent: Sorry, go ahead.',
      );
      answer = '{"passed": false, "reason": "It never said goodbye."}';
      expect(await judgeCall('Says goodbye.', facts({ transcript, vendor: vendor() }), o)).to.deep.equal({ type: 'judge', passed: false, evidence: 'It never said goodbye.' });
    });

    it('a malformed answer, a vendor error and an egress refusal each fail, saying so', async () => {
      answer = 'I think it went fine.';
      expect(await judgeCall('x', facts({ transcript, vendor: vendor() }), o)).to.deep.equal({
        type: 'judge',
        passed: false,
        evidence: 'the judge\'s answer is no verdict: the model did not answer with a JSON verdict; it said "I think it went fine."',
      });
      answer = '{"passed": "yes", "reason": ""}';
      const r = await judgeCall('x', facts({ transcript, vendor: vendor() }), o);
      expect(r.passed).to.equal(false);
      expect(r.evidence).to.match(/^the judge's answer is no verdict: the verdict is not \{passed: boolean, reason: non-empty string\} \(passed, reason\)/);
      expect(parseVerdict('{"passed": true}')).to.have.property('error');
      answer = '500';
      const failed = await judgeCall('x', facts({ transcript, vendor: vendor() }), o);
      expect(failed.passed).to.equal(false);
      expect(failed.evidence).to.match(/^the judge \(openai\.judge\) failed: .*500/);
      const before = llm.requests.length;
      const refused = await judgeCall('x', facts({ transcript, vendor: vendor(egressPolicyFor({})) }), o);
      expect(refused.passed).to.equal(false);
      expect(refused.evidence).to.match(/^the judge \(openai\.judge\) failed: LLM endpoint refused: /);
      expect(llm.requests.length, 'nothing reached the vendor').to.equal(before);
      expect(await judgeCall('x', facts({ transcript }), o)).to.deep.equal({ type: 'judge', passed: false, evidence: 'the judge could not be asked: no vendor in this test' });
    });

    it("the request's deadline ends with it: no timer fires after the answer, no listener stays on the run's signal", async () => {
      answer = '{"passed": true, "reason": "fine"}';
      const run = new AbortController();
      let sent: AbortSignal | undefined;
      let listening = -1;
      const seen = async () => {
        const real = await vendor()();
        if ('error' in real) return real;
        const spied: ChatLlm = {
          label: real.label,
          stream: (req) => real.stream(req),
          complete: (req) => {
            sent = req.signal;
            listening = getEventListeners(run.signal, 'abort').length;
            return real.complete(req);
          },
        };
        return spied;
      };
      const timeoutMs = 150;
      expect(await judgeCall('x', facts({ transcript, vendor: seen }), { timeoutMs, signal: run.signal })).to.include({ passed: true });
      // a timer left armed would abort the finished request's signal once timeoutMs passed: give it three times that
      await new Promise((r) => setTimeout(r, timeoutMs * 3));
      expect(sent?.aborted, "the finished request's deadline fired").to.equal(false);
      expect(listening, "the run's signal stops the request while it is in flight").to.equal(1);
      expect(getEventListeners(run.signal, 'abort'), 'none left once it answered').to.have.length(0);
    });

    it('a judge slower than its deadline fails, saying so', async () => {
      const slow = await startLlmServer({ respond: () => ({ text: '{"passed": true, "reason": "late"}' }), firstChunkDelayMs: 3000 });
      try {
        const v = () => Promise.resolve(llmFor({ engine_model: 'openai.judge', engine_url: slow.url }, {}, egressPolicyFor({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' })));
        const t0 = Date.now();
        expect(await judgeCall('x', facts({ transcript, vendor: v }), { timeoutMs: 200, signal: new AbortController().signal })).to.deep.equal({
          type: 'judge',
          passed: false,
          evidence: 'the judge (openai.judge) failed: the answer took longer than 200 ms',
        });
        expect(Date.now() - t0).to.be.below(2000);
      } finally {
        await slow.close();
      }
    });
  });
});
