// A Media Streams app on an agent framework as an eval target (issue 56, docs/evals.md "A Media Streams
// app with an agent framework"): OpenAI's Agents SDK, published and unmodified (@openai/agents'
// RealtimeAgent and RealtimeSession on @openai/agents-extensions' TwilioRealtimeTransportLayer), in an
// app on loopback that answers its own TwiML with <Connect><Stream> (testkit/evals/agents-sdk-app.ts).
// Its model is the OpenAI Realtime stand-in (testkit/ai/realtime-server.ts) speaking espeak-ng speech:
// the caller's question is answered through the agent's tool (the model calls opening_hours, the SDK
// runs it and sends its output back, the model says what it returned), the key press the app hands the
// model as a user message. The scenario the other agent kinds run (test/evals/agent-kinds.test.ts)
// runs over SIP and RTP through the edge: what the caller heard, the barge-in (the SDK's own `clear`),
// the turns measured at the caller and each check's verdict; the checks on the agent's text and tool
// calls fail saying the platform records none for an app outside it.
import { expect } from 'chai';
import WebSocket from 'ws';
import { egressPolicyFor } from '../../core/net';
import { until, type Platform } from '../../testkit/media-app/harness';
import { evalRunEnded, numberWithFlow, postEvalRun, postEvalScenario, startEvalWorker, useLiveEvals } from '../../testkit/evals/live';
import { SILENT_SCRIPT, startRealtimeServer, type RealtimeServer } from '../../testkit/ai/realtime-server';
import { startSdkApp, type SdkApp } from '../../testkit/evals/agents-sdk-app';
import { speak } from '../../evals/speech';
import { CALLER_SIDE, NO_AI_TALK, NO_TOOL_CALLS, withoutAiTalk } from '../../evals/agent-kind';
import type { EvalCallResult } from '../../core/evals/schema';
import { ANSWER, ASK, bakeryScenario, DIGIT, GREETING } from '../../testkit/evals/bakery';

const KEY = 'sk-evals-agents-sdk';
/** The server VAD's silence that ends the caller's turn (the SDK's turnDetection.silenceDurationMs). */
const END_OF_TURN_MS = 700;
/** What a turn measured at the caller may add to the model's end of turn: the tool's round trip, the voice's lead-in, RTP both ways. */
const TURN_SLACK_MS = 3000;

/** The scenario of test/evals/agent-kinds.test.ts, and the agent's tool call. */
const SCENARIO = (number: string) =>
  bakeryScenario('agents sdk', number, [
    { type: 'transcript_heard_contains', text: 'open from nine' },
    { type: 'barge_in_within', ms: 2000 },
    { type: 'ended_by', by: 'caller' },
    { type: 'transcript_heard_contains', text: 'pressed one' },
    { type: 'latency_under', ms: 5000 },
    { type: 'transcript_contains', role: 'agent', text: 'open from nine' },
    { type: 'tool_called', name: 'opening_hours', arguments: { day: 'today' } },
    // words the agent never says: what the caller heard shows it
    { type: 'transcript_heard_contains', text: 'we are closed' },
  ]);

describe('evals: tool_called on a call without ai_talk', () => {
  // the platform records tool calls only of ai_talk: an app's own tools ran where it cannot see, and
  // "no tool was called" alone would say they did not run
  it('fails saying the platform records no tool calls of an agent outside it, on a Media Streams and a ConversationRelay app alike', () => {
    const checks = [{ type: 'tool_called' as const, name: 'opening_hours' }];
    const judged = [{ type: 'tool_called', passed: false, evidence: 'no tool was called (looking for opening_hours)' }];
    const want = [{ type: 'tool_called', passed: false, evidence: `no tool was called (looking for opening_hours) (${NO_TOOL_CALLS})` }];
    expect(withoutAiTalk(checks, judged, { lines: 0, loss: null })).to.deep.equal(want);
    expect(withoutAiTalk(checks, judged, { lines: 3, loss: null })).to.deep.equal(want);
    expect(NO_TOOL_CALLS).to.match(/^no ai_talk ran on the call: the platform records no tool calls/);
  });
});

describe('evals: the Realtime stand-in refuses an audio format it does not speak', function () {
  this.timeout(20_000);
  // it speaks µ-law only: audio in another format would be misread as µ-law, never refused
  it('session.update asking audio/pcm or pcm16 gets an error event naming it; audio/pcmu and g711_ulaw are taken', async () => {
    const rt = await startRealtimeServer(KEY, SILENT_SCRIPT);
    const ws = new WebSocket(`${rt.url.replace(/^https:/, 'wss:')}/realtime?model=gpt-realtime`, { headers: { Authorization: `Bearer ${KEY}` }, ca: rt.cert.cert });
    try {
      const events: Record<string, unknown>[] = [];
      ws.on('message', (raw) => events.push(JSON.parse(String(raw)) as Record<string, unknown>));
      await new Promise<void>((resolve, reject) => ws.once('open', () => resolve()).once('error', reject));
      const reply = async (session: Record<string, unknown>) => {
        const from = events.length;
        ws.send(JSON.stringify({ type: 'session.update', event_id: `e${from}`, session }));
        return until(() => events.slice(from).find((e) => e.type === 'session.updated' || e.type === 'error'), 5000, 'the answer to session.update');
      };
      const pcm = await reply({ type: 'realtime', audio: { input: { format: { type: 'audio/pcm', rate: 24000 } } } });
      expect(pcm.error, JSON.stringify(pcm)).to.deep.include({ type: 'invalid_request_error', code: 'unsupported_audio_format', param: 'session.audio.input.format' });
      expect((pcm.error as { message: string }).message).to.contain('audio/pcm');
      const beta = await reply({ output_audio_format: 'pcm16' });
      expect((beta.error as { param?: string; message: string } | undefined)?.param, JSON.stringify(beta)).to.equal('session.output_audio_format');
      expect((await reply({ type: 'realtime', audio: { input: { format: { type: 'audio/pcmu' } }, output: { format: { type: 'audio/pcmu' } } } })).type).to.equal('session.updated');
      expect((await reply({ input_audio_format: 'g711_ulaw' })).type).to.equal('session.updated');
      // an update without formats (a hand-off's new instructions) leaves them as they were
      expect((await reply({ type: 'realtime', instructions: 'x' })).type).to.equal('session.updated');
    } finally {
      ws.terminate();
      await rt.close();
    }
  });
});

describe('evals: a Media Streams app on the OpenAI Agents SDK (TwilioRealtimeTransportLayer) as the target', function () {
  this.timeout(180_000);
  let p: Platform;
  let rt: RealtimeServer;
  let app: SdkApp;
  /** what the model was given as the tool's output and as the key press */
  const toModel: string[] = [];
  const api = useLiveEvals('evals-agentsfw-', undefined, (s) => ({ p } = s));

  before(async () => {
    const [greeting, answer, digit] = await Promise.all([GREETING, ANSWER, DIGIT].map((t) => speak(t, 'en-US', { memo: false })));
    rt = await startRealtimeServer(KEY, {
      greeting: { say: GREETING, speech: greeting! },
      // the caller's question: the model asks the agent's tool, and says what it answered
      turn: (n) => (n === 0 ? { heard: ASK, reply: { call: 'opening_hours', arguments: { day: 'today' } } } : { heard: '', reply: { say: '', ms: 0 } }),
      afterCall: (name, output) => (toModel.push(`${name} → ${output}`), output === 'nine to five' ? { say: ANSWER, speech: answer! } : null),
      text: (text) => (toModel.push(`text ${text}`), text === 'The caller pressed 1.' ? { say: DIGIT, speech: digit! } : null),
    });
    app = await startSdkApp({
      realtimeUrl: `${rt.url.replace(/^https:/, 'wss:')}/realtime?model=gpt-realtime`,
      apiKey: KEY,
      ca: rt.cert.cert,
      hours: (day) => (day === 'today' ? 'nine to five' : 'closed'),
      silenceMs: END_OF_TURN_MS,
    });
  });
  after(async () => {
    await app?.close();
    await rt?.close();
  });

  it('heard, barged in on, timed at the caller; its tool ran; the checks on what only ai_talk records fail saying so', async () => {
    await numberWithFlow(api, '+899573100001', [{ type: 'answer' }, { type: 'twiml', option: { url: app.twimlUrl } }]);
    const runId = await postEvalRun(api, { scenario_ids: [await postEvalScenario(api, SCENARIO('+899573100001'))] });
    api.worker ??= startEvalWorker(api, p, { config: { EVALS_AGENT_WAIT_MS: '15000' }, env: {}, egress: egressPolicyFor({}) });
    const run = await evalRunEnded<{ status: string; error: string; results: EvalCallResult[] }>(api, runId, 120_000);
    expect(run.status, run.error).to.equal('finished');
    const r = run.results[0]!;
    const update = rt.received.find((e) => e.type === 'session.update')?.event.session;
    const shown = JSON.stringify({ checks: r.checks, heard: r.heard, transcript: r.transcript, turns: r.turns, app: app.log, toModel, vad: rt.vadAt, update });

    // the SDK asked for µ-law both ways (the Twilio transport's formats) and the turn silence the app set
    const audio = (update as { audio?: { input?: { format?: unknown; turn_detection?: { silence_duration_ms?: number } }; output?: { format?: unknown } } }).audio;
    expect([audio?.input?.format, audio?.output?.format, audio?.input?.turn_detection?.silence_duration_ms], shown).to.deep.equal([{ type: 'audio/pcmu' }, { type: 'audio/pcmu' }, END_OF_TURN_MS]);
    // the app's tool ran with the model's arguments, its output went back to the model; the key press reached it as text
    expect(app.log, shown).to.deep.equal(['tool opening_hours {"day":"today"}', 'dtmf 1']);
    expect(toModel, shown).to.deep.equal(['opening_hours → nine to five', 'text The caller pressed 1.']);
    // the SDK cleared the greeting the caller talked over, and truncated it where the caller stopped hearing it
    expect(
      rt.received.some((e) => e.type === 'conversation.item.truncate'),
      shown,
    ).to.equal(true);

    expect(
      r.transcript.map((l) => [l.role, l.text]),
      shown,
    ).to.deep.equal([['caller', ASK]]);
    expect(
      r.turns.map((x) => [x.measured, x.interrupted]),
      shown,
    ).to.deep.equal([
      ['caller', false],
      ['caller', false],
    ]);
    // the answer: at least the model's end-of-turn silence after the caller's question; the digit's: at once
    const [answer, digit] = r.turns.map((x) => x.latency_ms!);
    expect(answer, shown)
      .to.be.at.least(END_OF_TURN_MS)
      .and.below(END_OF_TURN_MS + TURN_SLACK_MS);
    expect(digit, shown).to.be.at.least(0).and.below(TURN_SLACK_MS);
    const heard = (text: string) => r.heard?.find((h) => h.text.includes(text));
    expect(r.checks, shown).to.deep.equal([
      { type: 'transcript_heard_contains', passed: true, evidence: r.checks[0]!.evidence },
      { type: 'barge_in_within', passed: true, evidence: r.checks[1]!.evidence },
      { type: 'ended_by', passed: true, evidence: "the call's record: hung up by caller (hangup_by remote, hangup_reason normal)" },
      { type: 'transcript_heard_contains', passed: true, evidence: r.checks[3]!.evidence },
      { type: 'latency_under', passed: true, evidence: `2 turn(s), the slowest ${Math.max(answer!, digit!)} ms (${CALLER_SIDE})` },
      { type: 'transcript_contains', passed: false, evidence: `"open from nine" not in any of 0 agent line(s) (${NO_AI_TALK})` },
      { type: 'tool_called', passed: false, evidence: `no tool was called (looking for opening_hours) (${NO_TOOL_CALLS})` },
      { type: 'transcript_heard_contains', passed: false, evidence: r.checks[7]!.evidence },
    ]);
    expect(heard('open from nine'), shown).to.not.equal(undefined);
    expect(heard('pressed one'), shown).to.not.equal(undefined);
    expect(r.checks[0]!.evidence, shown).to.contain('open from nine');
    expect(r.checks[7]!.evidence, shown).to.contain('we are closed');
  });
});
