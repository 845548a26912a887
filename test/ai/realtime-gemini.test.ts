// ai_talk with Gemini Live (engine_model gemini-live.<model>) on real calls: the platform streams the
// call's audio to a stand-in of Gemini's Live API (testkit/ai/gemini-live-server.ts, ws on loopback)
// through the official @google/genai SDK (its Live client over a socket pinned by the egress policy)
// and plays the model's audio (tones, PCM 24 kHz resampled) into the call, heard on an RTP sink.
// An outbound call (greeting first, a caller turn, set_variables, stop_flow, aimessages), barge-in cut
// at what was played, a refused key, a refused (private) URL.
import { expect } from 'chai';
import { startGeminiLiveServer, type GeminiLiveServer } from '../../testkit/ai/gemini-live-server';
import type { RealtimeScript } from '../../testkit/ai/realtime-server';
import { aiFlow, bargeInCall, expectAnswerStages, expectOrderTranscripts, orderCall, orderScript, privateUrlCall, refusedKeyCall, useS2sVendor } from '../../testkit/ai/s2s-calls';

const KEY = 'gemini-platform-key-0123456789';
const MODEL = 'gemini-live.gemini-2.5-flash-native-audio-preview';

describe('ai_talk with a speech-to-speech model (Gemini Live)', function () {
  this.timeout(120_000);
  const suite = useS2sVendor(
    'ai-gm-',
    (script) => startGeminiLiveServer(KEY, script),
    (gm) => ({ GEMINI_BASE_URL: gm.url, GEMINI_API_KEY: KEY }),
  );
  let gm: GeminiLiveServer;
  before(() => (gm = suite.vendor));

  function useScript(script: RealtimeScript) {
    suite.use(script);
    gm.audioMimeTypes.clear();
  }

  it('an outbound call: greets first within 1 s, hears the callee, runs set_variables and stop_flow, stores the transcripts and the answer stages', async () => {
    useScript(orderScript('Hello, Acme Bikes, how can I help?', 'stop_flow'));
    const f = await aiFlow({ engine_model: MODEL, tts_voice_id: 'Puck' });
    await orderCall(suite, f);
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
    await expectOrderTranscripts(f, 'stop_flow');
    // the caller's turn measured: from its last words' transcript (inputTranscription) to the reply's audio
    await expectAnswerStages(f, 0);
  });

  it('barge-in: the caller speaks over a long greeting; the vendor interrupts and the caller hears only what was played', async () => {
    const f = await bargeInCall(suite, MODEL);
    const aicall = (await f.db('aicalls').where({ customer_id: f.cid }))[0];
    const tool = await f.db('aimessages').where({ aicall_id: aicall.id, role: 'tool' }).first();
    expect(tool!.content).to.include('call will end');
  });

  it('a refused key: the flow ends with the reason and an aicall_realtime_failed event; nothing is played', async () => {
    await refusedKeyCall(suite, MODEL, 'wrong-gemini-key-4567', 'gemini-live: the API key was refused (1007)');
  });

  it('an engine_url on a private address: refused by the egress policy before any connection', async () => {
    await privateUrlCall(suite, MODEL, 'gemini-live');
  });
});
