// A speakerphone caller against ai_talk over SIP (issue 56, docs/evals.md "Background audio"): the
// agent's greeting fed back at -20 dB does not make it cut itself (no_self_interruption passes) and it
// still answers the caller's question, asked once the greeting is over (a question over the greeting's
// tail with the echo under it is the echo guard's case of caller speech over the agent,
// media-app/ai/echo-guard.ts, not this test's). CI runs it in the real-time lane (docs/evals.md).
import { expect } from 'chai';
import { egressPolicyFor } from '../../core/net';
import { lastUser, type LlmRequest, type LlmReply } from '../../testkit/llm-server';
import { aiTalkActions, evalRunEnded, numberWithFlow, postEvalRun, postEvalScenario, standInAi, startEvalWorker, useLiveEvals } from '../../testkit/evals/live';
import type { EvalCallResult } from '../../core/evals/schema';

const GREETING = 'Welcome to the corner bakery, where we bake bread, rolls and cakes every morning before sunrise for the whole town.';
const ASK = 'What are your opening hours?';
const ANSWER = 'We open at nine in the morning.';

function respond(req: LlmRequest): LlmReply {
  const heard = lastUser(req);
  return heard.toLowerCase().includes('opening') ? { text: ANSWER } : heard ? { text: 'Sorry, go ahead.' } : { text: GREETING };
}

describe('evals background echo over SIP: a speakerphone caller does not make ai_talk cut itself', function () {
  this.timeout(150_000);
  const api = useLiveEvals('evals-bg-', respond);

  it('the greeting echoed back at -20 dB after 60 ms: no self-interruption, the question still answered', async () => {
    const ai = await standInAi(api, api.llm.url, {
      name: 'bakery',
      init_prompt: 'You are the bakery.',
      tool_names: [],
      // the recogniser knows the greeting's words too: its echo, were it passed on, would be heard as the caller saying them
      parameter: { stt_phrases: [ASK.toLowerCase().replace('?', ''), 'welcome to the corner bakery', 'we bake bread rolls and cakes every morning'] },
    });
    await numberWithFlow(api, '+899573000001', aiTalkActions(ai.id));
    const scenarioId = await postEvalScenario(api, {
      name: 'speakerphone',
      target: { type: 'number', target: '+899573000001' },
      caller: {
        turns: [{ wait_ms: 12_000 }, { say: ASK }, { wait_ms: 6000 }, { hangup: true }],
        background: { type: 'echo', gain_db: -20, delay_ms: 60 },
        // a scripted caller that transcribes what it heard, after the call
        hear: { phrases: ['welcome to the corner bakery', 'we open at nine in the morning'] },
      },
      checks: [{ type: 'no_self_interruption' }, { type: 'transcript_contains', role: 'agent', text: 'nine in the morning' }, { type: 'transcript_heard_contains', text: 'nine in the morning' }],
    });
    api.worker = startEvalWorker(api, api.p, { env: {}, egress: egressPolicyFor({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }) });
    const run = await evalRunEnded<{ status: string; error: string; results: EvalCallResult[] }>(api, await postEvalRun(api, { scenario_ids: [scenarioId] }));
    expect(run.status, run.error).to.equal('finished');
    const r = run.results[0]!;
    const dump = JSON.stringify(r);
    expect(r.checks[0], dump).to.deep.include({ passed: true });
    expect(r.checks[1], dump).to.deep.include({ passed: true });
    expect(r.checks[2], dump).to.deep.include({ passed: true });
    expect(r.transcript.find((l) => l.text === ANSWER)?.heard_text, dump).to.equal('we open at nine in the morning');
    // the greeting was said whole, not cut by its own echo
    expect(r.turns[0]?.interrupted, dump).to.equal(false);
  });
});
