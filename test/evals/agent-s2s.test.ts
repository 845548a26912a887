// A speech-to-speech agent as an eval target (issue 56, docs/evals.md "Agent kinds"): ai_talk with a
// realtime engine_model on the OpenAI Realtime stand-in test/ai uses (testkit/ai/realtime-server.ts,
// wss on loopback: it hears the caller's audio and answers with tones and a transcript). The simulated
// caller dials over SIP through the edge, waits for the greeting, asks, and hangs up; the result has
// the two-sided transcript (the agent's lines are the model's transcripts ai_talk stored) and each
// reply's latency stages as such an ai_talk records them (media-app/ai/realtime-turns.ts): the
// vendor's end of the caller's turn, the model's first audio, its first audio out.
import { expect } from 'chai';
import { aisRepo } from '../../core/repos/ais';
import { egressPolicyFor } from '../../core/net';
import type { Platform } from '../../testkit/media-app/harness';
import { useRealtimeStack } from '../../testkit/ai/s2s-calls';
import type { RealtimeServer } from '../../testkit/ai/realtime-server';
import { aiTalkActions, evalRunEnded, numberWithFlow, postEvalRun, postEvalScenario, startEvalWorker, useEvalsCustomer } from '../../testkit/evals/live';
import type { EvalCallResult } from '../../core/evals/schema';
import type { RealtimeScript } from '../../testkit/ai/realtime-server';
import { startGeminiLiveServer, type GeminiLiveServer } from '../../testkit/ai/gemini-live-server';
import { startDeepgramAgentServer, type DeepgramAgentServer } from '../../testkit/ai/deepgram-agent-server';

const KEY = 'sk-evals-realtime-key';
const GREETING = 'Hello, the corner bakery, how can I help?';
const ANSWER = 'We are open from nine to five.';
const ASK = 'What are your opening hours?';

const SCRIPT: RealtimeScript = { greeting: { say: GREETING, ms: 1200, hz: 440 }, turn: () => ({ heard: ASK.toLowerCase(), reply: { say: ANSWER, ms: 1000, hz: 660 } }), afterCall: () => null };

describe('evals: a speech-to-speech agent (ai_talk on the OpenAI Realtime stand-in) as the target', function () {
  this.timeout(150_000);
  let p: Platform;
  let rt: RealtimeServer;
  // Gemini Live's and Deepgram's stand-ins, up before the platform that is pointed at them
  let gm: GeminiLiveServer;
  let dg: DeepgramAgentServer;
  before(async () => {
    gm = await startGeminiLiveServer(KEY, SCRIPT);
    dg = await startDeepgramAgentServer(KEY, SCRIPT);
  });
  after(async () => {
    await gm?.close();
    await dg?.close();
  });
  useRealtimeStack(
    'evals-s2s-',
    KEY,
    SCRIPT,
    (stand) => ({ OPENAI_BASE_URL: stand.url, OPENAI_API_KEY: KEY, GEMINI_BASE_URL: gm.url, GEMINI_API_KEY: KEY, DEEPGRAM_AGENT_BASE_URL: dg.url, DEEPGRAM_API_KEY: KEY }),
    (s) => ({ p, rt } = s),
  );
  const api = useEvalsCustomer('evals-s2s-');

  /**
   * An agent on `model` behind `number`, one scenario (wait for the greeting, ask, hang up) with `checks`
   * run on it: its result once the run finished, with the three lines of the transcript checked.
   */
  async function runAgent(name: string, model: string, voice: string, number: string, checks: unknown[]): Promise<{ r: EvalCallResult; shown: string }> {
    const ai = await aisRepo(api.t.ctx.db).create(api.f.customer.id, {
      name,
      init_prompt: 'You are the bakery.',
      engine_model: model,
      tts_voice_id: voice,
      parameter: {},
      vad_config: { stop_secs: 0.6 },
    });
    await numberWithFlow(api, number, aiTalkActions(ai.id));
    const scenarioId = await postEvalScenario(api, {
      name,
      target: { type: 'number', target: number },
      caller: { turns: [{ wait_ms: 2500 }, { say: ASK }, { wait_ms: 4000 }, { hangup: true }] },
      checks,
    });
    const runId = await postEvalRun(api, { scenario_ids: [scenarioId] });
    api.worker ??= startEvalWorker(api, p, { env: {}, egress: egressPolicyFor({}) });
    const run = await evalRunEnded<{ status: string; error: string; results: EvalCallResult[] }>(api, runId);
    expect(run.status, run.error).to.equal('finished');
    const r = run.results[0]!;
    const shown = JSON.stringify(r);
    expect(
      r.transcript.map((l) => [l.role, l.text]),
      shown,
    ).to.deep.equal([
      ['agent', GREETING],
      ['caller', ASK],
      ['agent', ANSWER],
    ]);
    return { r, shown };
  }

  it('the scenario runs: the transcript has the greeting, the question and the answer; each reply a turn with its stages', async () => {
    const { r, shown } = await runAgent('s2s', 'openai-realtime.gpt-realtime', 'marin', '+899574000001', [
      { type: 'transcript_contains', role: 'agent', text: 'open from nine' },
      { type: 'ended_by', by: 'caller' },
      { type: 'latency_under', ms: 5000 },
    ]);
    expect(
      r.checks.map((c) => c.passed),
      shown,
    ).to.deep.equal([true, true, true]);
    // the greeting (measured from the ask) and the answer (from the caller's speech end), no stage of a
    // recogniser, chat model or voice of the platform's
    expect(r.turns, shown).to.have.length(2);
    const [greeting, answer] = r.turns;
    expect(greeting, shown).to.include({ end_of_turn_wait_ms: null, stt_final_ms: null, llm_first_token_ms: null, tts_first_byte_ms: null, interrupted: false });
    expect(greeting!.latency_ms, shown)
      .to.be.a('number')
      .and.be.at.least(greeting!.model_first_audio_ms as number);
    expect(answer, shown).to.include({ stt_final_ms: null, llm_first_token_ms: null, tts_first_byte_ms: null, interrupted: false });
    // the stand-in's VAD ends the turn after the AI's 600 ms of silence (stop_secs), then answers
    const wait = answer!.end_of_turn_wait_ms!;
    const model = answer!.model_first_audio_ms as number;
    expect(wait, shown).to.be.at.least(550).and.below(2000);
    expect(model, shown).to.be.at.least(wait);
    expect(answer!.latency_ms, shown).to.be.at.least(model).and.below(3000);
    expect(r.checks[2], shown).to.deep.equal({ type: 'latency_under', passed: true, evidence: `2 turn(s), the slowest ${Math.max(greeting!.latency_ms!, answer!.latency_ms!)} ms` });
    // the stand-in answered from the caller's audio: the greeting and one turn
    expect(rt.received.filter((e) => e.type === 'response.create').length).to.be.at.least(1);
  });

  // Gemini Live and Deepgram send no end of the caller's speech: the answer's stages are derived from the
  // events they do send (docs/ai.md "Latency per reply"), with no end_of_turn_wait_ms
  const vendors = [
    { name: 'Gemini Live', model: 'gemini-live.gemini-2.5-flash-native-audio-preview', voice: 'Puck', number: '+899574000002' },
    { name: 'Deepgram Voice Agent', model: 'deepgram-agent.gpt-4o-mini', voice: 'aura-2-orion-en', number: '+899574000003' },
  ];
  for (const v of vendors) {
    it(`${v.name}: the answer to the caller's turn is a turn with its latency_ms and stages`, async () => {
      const { r, shown } = await runAgent(v.name, v.model, v.voice, v.number, [
        { type: 'transcript_contains', role: 'agent', text: 'open from nine' },
        { type: 'latency_under', ms: 5000 },
      ]);
      expect(r.turns, shown).to.have.length(2);
      const answer = r.turns[1]!;
      expect(answer, shown).to.include({ end_of_turn_wait_ms: null, stt_final_ms: null, llm_first_token_ms: null, tts_first_byte_ms: null, interrupted: false });
      const model = answer.model_first_audio_ms as number;
      expect(model, shown).to.be.a('number').and.be.at.least(0);
      expect(answer.latency_ms, shown).to.be.a('number').and.be.at.least(model).and.below(5000);
      expect(
        r.checks.map((c) => c.passed),
        shown,
      ).to.deep.equal([true, true]);
    });
  }
});
