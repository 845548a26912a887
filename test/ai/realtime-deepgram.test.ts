// ai_talk with Deepgram's Voice Agent (engine_model deepgram-agent.<think model>) on real calls: the
// platform streams the call's audio to a stand-in of the Voice Agent API
// (testkit/ai/deepgram-agent-server.ts, ws on loopback) through the official @deepgram/sdk (its agent
// socket over a transport pinned by the egress policy) and plays the agent's audio (tones, µ-law
// 8 kHz) into the call, heard on an RTP sink. An outbound call (the Settings greeting first, a caller
// turn, set_variables, stop_service, aimessages), barge-in cut at what was played, a refused key
// (HTTP 401), a refused (private) URL.
import { expect } from 'chai';
import { startDeepgramAgentServer } from '../../testkit/ai/deepgram-agent-server';
import { flowsRepo } from '../../core/repos/flows';
import { TimedSink } from '../../testkit/ai/audio';
import {
  aiFlow,
  aimessagesOf,
  inboundCall,
  bargeInCall,
  expectAnswerStages,
  expectOrderTranscripts,
  orderCall,
  orderScript,
  privateUrlCall,
  refusedKeyCall,
  useS2sVendor,
} from '../../testkit/ai/s2s-calls';

const KEY = 'dg-platform-key-0123456789';
const MODEL = 'deepgram-agent.gpt-4o-mini';

describe('ai_talk with a speech-to-speech model (Deepgram Voice Agent)', function () {
  this.timeout(120_000);
  const suite = useS2sVendor(
    'ai-dg-',
    (script) => startDeepgramAgentServer(KEY, script),
    (dg) => ({ DEEPGRAM_AGENT_BASE_URL: dg.url, DEEPGRAM_API_KEY: KEY }),
  );

  it('an outbound call: the greeting first within 1 s, hears the callee, runs set_variables and stop_service, stores the transcripts and the answer stages', async () => {
    // the greeting is the flow's parameter.greeting, sent in the Settings: the stand-in says nothing of its own
    suite.use(orderScript('', 'stop_service'));
    const f = await aiFlow({ engine_model: MODEL, tts_voice_id: 'aura-2-orion-en', parameter: { shop: 'Acme Bikes', greeting: 'Hello, Acme Bikes, how can I help?' } });
    await orderCall(suite, f);
    const dg = suite.vendor;
    expect(dg.authorization).to.equal(`Token ${KEY}`);
    // what the agent was told (the Settings the SDK sent)
    const settings = dg.received.find((e) => e.type === 'Settings')!.message as {
      audio: { input: Record<string, unknown>; output: Record<string, unknown> };
      agent: { greeting: string; think: { provider: Record<string, unknown>; prompt: string; functions: { name: string }[] }; speak: { provider: Record<string, unknown> } };
    };
    expect(settings.audio.input).to.deep.equal({ encoding: 'mulaw', sample_rate: 8000 });
    expect(settings.audio.output).to.include({ encoding: 'mulaw', sample_rate: 8000 });
    expect(settings.agent.greeting).to.equal('Hello, Acme Bikes, how can I help?');
    expect(settings.agent.think.provider).to.deep.equal({ type: 'open_ai', model: 'gpt-4o-mini' });
    expect(settings.agent.think.prompt).to.equal('You take orders for Acme Bikes.');
    expect(settings.agent.think.functions.map((t) => t.name)).to.include.members(['set_variables', 'stop_flow', 'connect_call', 'stop_service']);
    expect(settings.agent.speak.provider).to.include({ model: 'aura-2-orion-en' });
    const response = dg.received.find((e) => e.type === 'FunctionCallResponse')!.message;
    expect(response).to.include({ name: 'set_variables' });
    await expectOrderTranscripts(f, 'stop_service');
    // the caller's turn measured: from the utterance's end (AgentStartedSpeaking less its total_latency),
    // which the stand-in's VAD found 500 ms of silence before its ConversationText user
    await expectAnswerStages(f, 500);
  });

  it('barge-in: the caller speaks over a long greeting; UserStartedSpeaking cuts it at what was played', async () => {
    // no parameter.greeting: the agent is asked for one with InjectUserMessage
    await bargeInCall(suite, MODEL);
    expect(suite.vendor.received.map((e) => e.type)).to.include('InjectUserMessage');
  });

  it("the session ends before a reply's audio: its words (held for that audio) are still the transcript, marked cut", async () => {
    // the greeting's words come at once, its audio only after the vendor's latency: the 3 s ai_talk ends first
    suite.use({ greeting: { say: 'Hello, Acme Bikes, how can I help?', ms: 1000 }, turn: () => ({ heard: '', reply: { say: '', ms: 0 } }), afterCall: () => null });
    suite.vendor.latencyMs = 20_000;
    try {
      const f = await aiFlow({ engine_model: MODEL, parameter: { shop: 'Acme Bikes', greeting: 'Hello, Acme Bikes, how can I help?' } });
      const flow = (await flowsRepo(f.db).getOwned(f.cid, f.flowId))!;
      const actions = flow.actions.map((a) => (a.type === 'ai_talk' ? { ...a, option: { ...a.option, duration: 3 } } : a));
      await flowsRepo(f.db).update(f.cid, f.flowId, { actions } as Parameters<ReturnType<typeof flowsRepo>['update']>[2]);
      const sink = await TimedSink.open();
      try {
        const r = await inboundCall(suite.rig, f, [], sink);
        expect(r.code, r.errors + r.messages).to.equal(0);
      } finally {
        sink.close();
      }
      expect(suite.vendor.firstAudioAt, 'no audio of the reply came').to.deep.equal([]);
      const said = (await aimessagesOf(f.db, f.cid)).filter((m) => m.role === 'assistant' && m.content);
      expect(said.map((m) => m.content)).to.deep.equal(['Hello, Acme Bikes, how can I help?']);
      // its reply's turn: no audio came, cut by the end
      expect((said[0]!.metadata as { latency?: Record<string, unknown> }).latency).to.include({ first_rtp_ms: null, interrupted: true });
    } finally {
      suite.vendor.latencyMs = 0;
    }
  });

  it('a refused key (HTTP 401): the flow ends with the reason and an aicall_realtime_failed event; nothing is played', async () => {
    await refusedKeyCall(suite, MODEL, 'wrong-deepgram-key-4567', 'deepgram-agent: the API key was refused (HTTP 401)');
  });

  it('an engine_url on a private address: refused by the egress policy before any connection', async () => {
    await privateUrlCall(suite, MODEL, 'deepgram-agent');
  });
});
