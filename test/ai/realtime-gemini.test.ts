// ai_talk with Gemini Live (engine_model gemini-live.<model>) on real calls: the platform streams the
// call's audio to a stand-in of Gemini's Live API (testkit/ai/gemini-live-server.ts, ws on loopback)
// through the official @google/genai SDK (its Live client over a socket pinned by the egress policy)
// and plays the model's audio (tones, PCM 24 kHz resampled) into the call, heard on an RTP sink.
// An outbound call (greeting first, a caller turn, set_variables, stop_flow, aimessages), barge-in cut
// at what was played, a refused key, a refused (private) URL.
import { expect } from 'chai';
import { truncateAll } from '../../testkit/db';
import { TimedSink } from '../../testkit/ai/audio';
import { startGeminiLiveServer, type GeminiLiveServer } from '../../testkit/ai/gemini-live-server';
import type { RealtimeScript } from '../../testkit/ai/realtime-server';
import { aiFlow, aimessagesOf, endedFlow, failedBeforeAudio, inboundCall, outboundCall, startS2sRig, useCallerTurns, type S2sRig } from '../../testkit/ai/s2s-calls';

const KEY = 'gemini-platform-key-0123456789';
const MODEL = 'gemini-live.gemini-2.5-flash-native-audio-preview';
const idle: RealtimeScript = { greeting: { say: 'never', ms: 1000 }, turn: () => ({ heard: '', reply: { say: '', ms: 0 } }), afterCall: () => null };

describe('ai_talk with a speech-to-speech model (Gemini Live)', function () {
  this.timeout(120_000);
  let rig: S2sRig;
  let gm: GeminiLiveServer;
  const { q1, q2 } = useCallerTurns('ai-gm-');

  before(async () => {
    await truncateAll();
    gm = await startGeminiLiveServer(KEY, idle);
    rig = await startS2sRig({ GEMINI_BASE_URL: gm.url, GEMINI_API_KEY: KEY });
  });
  after(async () => {
    await rig?.close();
    await gm?.close();
  });

  function useScript(script: RealtimeScript) {
    gm.script = script;
    gm.received.length = 0;
    gm.speechStartedAt.length = 0;
    gm.firstAudioAt.length = 0;
    gm.audioMimeTypes.clear();
    gm.appendedMs = 0;
  }

  it('an outbound call: greets first within 1 s, hears the callee, runs set_variables and stop_flow, stores the transcripts', async () => {
    useScript({
      greeting: { say: 'Hello, Acme Bikes, how can I help?', ms: 1200, hz: 440 },
      turn: (n) =>
        n === 0
          ? { heard: 'my order number is forty two', reply: { call: 'set_variables', arguments: { variables: { order: '42' } } } }
          : { heard: 'that is all thank you', reply: { call: 'stop_flow', arguments: {} } },
      afterCall: (name) => (name === 'set_variables' ? { say: 'Noted, order forty two.', ms: 1000, hz: 660 } : null),
    });
    const f = await aiFlow({ engine_model: MODEL, tts_voice_id: 'Puck' });
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
      // the greeting (440 Hz) comes first, within 1 s of the call's first RTP packet
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
    // what the model was told (the setup message the SDK built)
    const setup = gm.received.find((e) => e.kind === 'setup')!.message.setup as Record<string, unknown> & {
      model: string;
      generationConfig: { responseModalities: string[]; speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: string } } } };
      systemInstruction: { parts: { text: string }[] };
      tools: { functionDeclarations: { name: string }[] }[];
    };
    expect(setup.model).to.equal('models/gemini-2.5-flash-native-audio-preview');
    expect(setup.generationConfig.responseModalities).to.deep.equal(['AUDIO']);
    expect(setup.generationConfig.speechConfig.voiceConfig.prebuiltVoiceConfig.voiceName).to.equal('Puck');
    expect(setup.systemInstruction.parts[0]!.text).to.equal('You take orders for Acme Bikes.');
    expect(setup.tools[0]!.functionDeclarations.map((t) => t.name)).to.include.members(['set_variables', 'stop_flow', 'connect_call', 'stop_service']);
    expect(setup).to.have.property('inputAudioTranscription');
    expect(setup).to.have.property('outputAudioTranscription');
    expect(gm.received[1]?.kind, 'the greeting is asked for right after the setup').to.equal('clientContent');
    const response = gm.received.find((e) => e.kind === 'toolResponse')!.message.toolResponse as { functionResponses: { name: string; response: { output: string } }[] };
    expect(response.functionResponses[0]!.name).to.equal('set_variables');
    // the callee's audio reached the model as PCM 16 kHz
    expect([...gm.audioMimeTypes]).to.deep.equal(['audio/pcm;rate=16000']);
    expect(gm.appendedMs, 'caller audio streamed').to.be.greaterThan(5000);
    const msgs = await aimessagesOf(f.db, f.cid);
    expect(msgs.filter((m) => m.role === 'assistant' && m.content).map((m) => m.content)).to.deep.equal(['Hello, Acme Bikes, how can I help?', 'Noted, order forty two.']);
    const heard = msgs.filter((m) => m.role === 'user');
    expect(heard.map((m) => m.content)).to.deep.equal(['my order number is forty two', 'that is all thank you']);
    expect(heard[0]!.direction).to.equal('incoming');
    expect(msgs.filter((m) => (m.tool_calls as unknown[])?.length).map((m) => (m.tool_calls as { function: { name: string } }[])[0]!.function.name)).to.deep.equal(['set_variables', 'stop_flow']);
  });

  it('barge-in: the caller speaks over a long greeting; the vendor interrupts and the caller hears only what was played', async () => {
    useScript({
      greeting: { say: 'This is a very long greeting that goes on and on.', ms: 8000, hz: 440 },
      turn: () => ({ heard: 'my order number is forty two', reply: { call: 'stop_flow', arguments: {} } }),
      afterCall: () => null,
    });
    const f = await aiFlow({ engine_model: MODEL });
    const sink = await TimedSink.open();
    try {
      const r = await inboundCall(rig, f, [{ atMs: 2500, pcap: q1.file }], sink);
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    // the server had sent all 8 s within about 2 s; what was played is the time from its first audio to the speech
    const played = gm.speechStartedAt[0]! - gm.firstAudioAt[0]!;
    expect(played).to.be.within(1000, 6000);
    const heardMs = (sink.dominantTones([440]).get(440) ?? 0) * 20;
    expect(heardMs, 'the greeting heard up to the barge-in, none of what was queued').to.be.within(played - 800, played + 800);
    const af = await endedFlow(f.db, f.cid);
    expect(af.end_reason).to.not.equal('error');
    const aicall = (await f.db('aicalls').where({ customer_id: f.cid }))[0];
    const tool = await f.db('aimessages').where({ aicall_id: aicall.id, role: 'tool' }).first();
    expect(tool!.content).to.include('call will end');
  });

  it('a refused key: the flow ends with the reason and an aicall_realtime_failed event; nothing is played', async () => {
    useScript(idle);
    const refused = gm.refused;
    const r = await failedBeforeAudio(rig, { engine_model: MODEL, engine_key: 'wrong-gemini-key-4567' });
    expect(gm.refused).to.equal(refused + 1);
    expect(r.endReason).to.equal('error');
    expect(r.error).to.include('gemini-live: the API key was refused (1007)');
    expect(r.error).to.not.include('wrong-gemini-key');
    expect(r.event).to.include({ engine_model: MODEL });
    expect(String(r.event?.reason)).to.include('API key was refused');
  });

  it('an engine_url on a private address: refused by the egress policy before any connection', async () => {
    useScript(idle);
    const started = Date.now();
    const r = await failedBeforeAudio(rig, { engine_model: MODEL, engine_url: 'https://10.255.255.1:8443', engine_key: 'own-gemini-key' });
    expect(Date.now() - started, 'no wait for a connection to the private address').to.be.lessThan(15_000);
    expect(r.endReason).to.equal('error');
    expect(r.error).to.include('gemini-live: the egress policy refused the vendor URL');
    expect(String(r.event?.reason)).to.include('egress policy refused');
  });
});
