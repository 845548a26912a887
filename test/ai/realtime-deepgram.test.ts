// ai_talk with Deepgram's Voice Agent (engine_model deepgram-agent.<think model>) on real calls: the
// platform streams the call's audio to a stand-in of the Voice Agent API
// (testkit/ai/deepgram-agent-server.ts, ws on loopback) through the official @deepgram/sdk (its agent
// socket over a transport pinned by the egress policy) and plays the agent's audio (tones, µ-law
// 8 kHz) into the call, heard on an RTP sink. An outbound call (the Settings greeting first, a caller
// turn, set_variables, stop_service, aimessages), barge-in cut at what was played, a refused key
// (HTTP 401), a refused (private) URL.
import { expect } from 'chai';
import { truncateAll } from '../../testkit/db';
import { TimedSink } from '../../testkit/ai/audio';
import { startDeepgramAgentServer, type DeepgramAgentServer } from '../../testkit/ai/deepgram-agent-server';
import type { RealtimeScript } from '../../testkit/ai/realtime-server';
import { aiFlow, aimessagesOf, endedFlow, failedBeforeAudio, inboundCall, outboundCall, startS2sRig, useCallerTurns, type S2sRig } from '../../testkit/ai/s2s-calls';

const KEY = 'dg-platform-key-0123456789';
const MODEL = 'deepgram-agent.gpt-4o-mini';
const idle: RealtimeScript = { greeting: { say: 'never', ms: 1000 }, turn: () => ({ heard: '', reply: { say: '', ms: 0 } }), afterCall: () => null };

describe('ai_talk with a speech-to-speech model (Deepgram Voice Agent)', function () {
  this.timeout(120_000);
  let rig: S2sRig;
  let dg: DeepgramAgentServer;
  const { q1, q2 } = useCallerTurns('ai-dg-');

  before(async () => {
    await truncateAll();
    dg = await startDeepgramAgentServer(KEY, idle);
    rig = await startS2sRig({ DEEPGRAM_AGENT_BASE_URL: dg.url, DEEPGRAM_API_KEY: KEY });
  });
  after(async () => {
    await rig?.close();
    await dg?.close();
  });

  function useScript(script: RealtimeScript) {
    dg.script = script;
    dg.received.length = 0;
    dg.speechStartedAt.length = 0;
    dg.firstAudioAt.length = 0;
    dg.appendedMs = 0;
  }

  it('an outbound call: the greeting first within 1 s, hears the callee, runs set_variables and stop_service, stores the transcripts', async () => {
    useScript({
      greeting: { say: '', ms: 1200, hz: 440 },
      turn: (n) =>
        n === 0
          ? { heard: 'my order number is forty two', reply: { call: 'set_variables', arguments: { variables: { order: '42' } } } }
          : { heard: 'that is all thank you', reply: { call: 'stop_service', arguments: {} } },
      afterCall: (name) => (name === 'set_variables' ? { say: 'Noted, order forty two.', ms: 1000, hz: 660 } : null),
    });
    const f = await aiFlow({ engine_model: MODEL, tts_voice_id: 'aura-2-orion-en', parameter: { shop: 'Acme Bikes', greeting: 'Hello, Acme Bikes, how can I help?' } });
    const sink = await TimedSink.open();
    try {
      const r = await outboundCall(
        rig,
        f,
        [
          { atMs: 2500, pcap: q1.file },
          { atMs: 2500 + q1.ms + 3000, pcap: q2.file },
        ],
        sink,
      );
      expect(r.code, r.errors + r.messages).to.equal(0);
      const voiced = sink.voicedTimes();
      expect(voiced.length, 'audio heard').to.be.greaterThan(0);
      expect(voiced[0]! - sink.packets[0]!.at, 'greeting after the media started').to.be.lessThan(1000);
      const tones = sink.dominantTones([440, 660]);
      expect(tones.get(440) ?? 0, 'greeting packets').to.be.within(40, 70);
      expect(tones.get(660) ?? 0, 'answer packets').to.be.within(35, 60);
    } finally {
      sink.close();
    }
    const af = await endedFlow(f.db, f.cid);
    expect(af.variables).to.include({ order: '42' });
    expect(af.end_reason).to.not.equal('error');
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
    expect(dg.appendedMs, 'caller audio streamed').to.be.greaterThan(5000);
    const msgs = await aimessagesOf(f.db, f.cid);
    expect(msgs.filter((m) => m.role === 'assistant' && m.content).map((m) => m.content)).to.deep.equal(['Hello, Acme Bikes, how can I help?', 'Noted, order forty two.']);
    const heard = msgs.filter((m) => m.role === 'user');
    expect(heard.map((m) => m.content)).to.deep.equal(['my order number is forty two', 'that is all thank you']);
    expect(heard[0]!.direction).to.equal('incoming');
    expect(msgs.filter((m) => (m.tool_calls as unknown[])?.length).map((m) => (m.tool_calls as { function: { name: string } }[])[0]!.function.name)).to.deep.equal(['set_variables', 'stop_service']);
  });

  it('barge-in: the caller speaks over a long greeting; UserStartedSpeaking cuts it at what was played', async () => {
    useScript({
      greeting: { say: 'This is a very long greeting that goes on and on.', ms: 8000, hz: 440 },
      turn: () => ({ heard: 'my order number is forty two', reply: { call: 'stop_flow', arguments: {} } }),
      afterCall: () => null,
    });
    // no parameter.greeting: the agent is asked for one with InjectUserMessage
    const f = await aiFlow({ engine_model: MODEL });
    const sink = await TimedSink.open();
    try {
      const r = await inboundCall(rig, f, [{ atMs: 2500, pcap: q1.file }], sink);
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    expect(dg.received.map((e) => e.type)).to.include('InjectUserMessage');
    const played = dg.speechStartedAt[0]! - dg.firstAudioAt[0]!;
    expect(played).to.be.within(1000, 6000);
    const heardMs = (sink.dominantTones([440]).get(440) ?? 0) * 20;
    expect(heardMs, 'the greeting heard up to the barge-in, none of what was queued').to.be.within(played - 800, played + 800);
    const af = await endedFlow(f.db, f.cid);
    expect(af.end_reason).to.not.equal('error');
  });

  it('a refused key (HTTP 401): the flow ends with the reason and an aicall_realtime_failed event; nothing is played', async () => {
    useScript(idle);
    const refused = dg.refused;
    const r = await failedBeforeAudio(rig, { engine_model: MODEL, engine_key: 'wrong-deepgram-key-4567' });
    expect(dg.refused).to.equal(refused + 1);
    expect(r.endReason).to.equal('error');
    expect(r.error).to.include('deepgram-agent: the API key was refused (HTTP 401)');
    expect(r.error).to.not.include('wrong-deepgram-key');
    expect(r.event).to.include({ engine_model: MODEL });
    expect(String(r.event?.reason)).to.include('API key was refused');
  });

  it('an engine_url on a private address: refused by the egress policy before any connection', async () => {
    useScript(idle);
    const started = Date.now();
    const r = await failedBeforeAudio(rig, { engine_model: MODEL, engine_url: 'https://10.255.255.1:8443', engine_key: 'own-deepgram-key' });
    expect(Date.now() - started, 'no wait for a connection to the private address').to.be.lessThan(15_000);
    expect(r.endReason).to.equal('error');
    expect(r.error).to.include('deepgram-agent: the egress policy refused the vendor URL');
    expect(String(r.event?.reason)).to.include('egress policy refused');
  });
});
