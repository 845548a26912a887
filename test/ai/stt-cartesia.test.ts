// stt_type "cartesia" on real calls: sipp plays tones into a call; Cartesia's streaming STT stand-in
// (testkit/speech/cartesia-stt-server.ts: its wire protocol on loopback) names each utterance by its
// tone, so the words the platform got are known. ai_talk hears the caller through it (the user
// aimessage is the stand-in's transcript), transcribe_start stores its finals as transcripts; a
// refused key and a vendor URL the egress policy refuses end ai_talk with a clear error and an
// aicall_stt_failed event, and no other recogniser takes over.
import { expect } from 'chai';
import { FakeCartesiaStt } from '../../testkit/speech/cartesia-stt-server';
import { SttCalls } from '../../testkit/speech/stt-calls';
import { CartesiaSttProvider } from '../../media-engine/stt';
import { compileTwiml } from '../../core/twiml/compile';

const KEY = 'cartesia-stt-key-0123456789';

describe('stt_type cartesia (Cartesia streaming STT) on live calls', function () {
  this.timeout(150_000);
  let bench: SttCalls;
  let vendor: FakeCartesiaStt;
  const saved = { ...process.env };

  before(async () => {
    vendor = await new FakeCartesiaStt(KEY).listen();
    vendor.words.set(600, 'what time is it');
    vendor.words.set(900, 'thank you');
    process.env.CARTESIA_BASE_URL = vendor.baseUrl;
    process.env.CARTESIA_API_KEY = KEY;
    process.env.EGRESS_ALLOW_CIDRS = '127.0.0.0/8';
    bench = await SttCalls.start();
  });
  after(async () => {
    await bench?.close();
    await vendor?.close();
    for (const k of ['CARTESIA_BASE_URL', 'CARTESIA_API_KEY', 'EGRESS_ALLOW_CIDRS']) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });
  afterEach(() => {
    process.env.CARTESIA_API_KEY = KEY;
    process.env.EGRESS_ALLOW_CIDRS = '127.0.0.0/8';
    vendor.latencyMs = 0;
  });

  it('the URL asks for ink-whisper and 16-bit PCM at the stream rate (16 kHz on a wideband leg)', () => {
    const p = new CartesiaSttProvider({ baseUrl: 'https://api.cartesia.ai', apiKey: 'k' });
    const wide = p.urlFor({ sampleRate: 16000, language: 'de-DE' });
    expect(wide.origin + wide.pathname).to.equal('wss://api.cartesia.ai/stt/websocket');
    expect(Object.fromEntries(wide.searchParams)).to.include({ model: 'ink-whisper', encoding: 'pcm_s16le', sample_rate: '16000', language: 'de' });
    expect(p.urlFor({}).searchParams.get('sample_rate')).to.equal('8000');
  });

  it('ai_talk: the caller is heard through Cartesia (its transcript is the user message), with the key and version on the upgrade', async () => {
    vendor.latencyMs = 150;
    const before = vendor.sessions.length;
    const { db, cid, number } = await bench.aiNumber('cartesia');
    await bench.call(number, [{ hz: 600, ms: 900 }]);
    expect(await bench.userMessages(db, cid)).to.deep.equal(['what time is it']);
    const s = vendor.sessions[before]!;
    expect(s.headers['x-api-key']).to.equal(KEY);
    expect(s.headers['cartesia-version']).to.be.a('string');
    expect(s.query.get('sample_rate')).to.equal('8000');
    expect(s.bytes).to.be.greaterThan(16000);
    const { af } = await bench.endOf(db, cid);
    expect(af.end_reason).to.not.equal('error');
  });

  it("the AI's own parameter.stt_key is the key sent, over the platform's CARTESIA_API_KEY", async () => {
    process.env.CARTESIA_API_KEY = 'platform-cartesia-key-refused';
    const before = vendor.sessions.length;
    const { db, cid, number } = await bench.aiNumber('cartesia', { stt_key: KEY });
    await bench.call(number, [{ hz: 600, ms: 900 }]);
    expect(await bench.userMessages(db, cid)).to.deep.equal(['what time is it']);
    expect(vendor.sessions[before]!.headers['x-api-key']).to.equal(KEY);
  });

  it("a refused parameter.stt_key fails the session even when the platform's key would do (no quiet switch to the platform key)", async () => {
    const { db, cid, number } = await bench.aiNumber('cartesia', { stt_key: 'ai-own-cartesia-key-wrong-4242' });
    await bench.call(number, [{ hz: 600, ms: 600 }], 1000, true);
    const { af, events } = await bench.endOf(db, cid);
    expect(af.error).to.include('cartesia: the API key was refused (HTTP 401)');
    expect(events.map((e) => e.event_type)).to.include('aicall_stt_failed');
    expect(JSON.stringify([af, events])).to.not.include('ai-own-cartesia-key-wrong');
  });

  it('stt_language es-ES: "y entonces", a pause, "nada más" is one turn by the Spanish rules (the English ones would end it at "entonces")', async () => {
    vendor.words.set(700, 'y entonces');
    vendor.words.set(800, 'nada más');
    const { db, cid, number } = await bench.aiNumber('cartesia', { max_endpointing_delay_ms: 4000 }, 12, 'es-ES');
    await bench.call(number, [{ hz: 700, ms: 900 }, { pauseMs: 900 }, { hz: 800, ms: 900 }], 2500);
    expect(await bench.userMessages(db, cid)).to.deep.equal(['y entonces nada más']);
  });

  it('transcribe_start with provider cartesia: each utterance of the call is a transcript', async () => {
    const { db, cid, number } = await bench.transcribeNumber('cartesia');
    await bench.call(number, [{ hz: 600, ms: 800 }, { pauseMs: 800 }, { hz: 900, ms: 800 }], 800);
    const rows = await bench.transcripts(db, cid);
    expect(rows.map((r) => r.message)).to.deep.equal(['what time is it', 'thank you']);
    expect(rows.every((r) => r.direction === 'in')).to.equal(true);
  });

  it('TwiML <Gather input="speech"> chooses the recogniser by speechModel: cartesia_* and elevenlabs_* (any language), else pocketsphinx', () => {
    for (const [model, provider] of [
      ['cartesia_ink-whisper', 'cartesia'],
      ['elevenlabs_scribe', 'elevenlabs'],
      ['deepgram_nova-2', 'deepgram'],
    ]) {
      const actions = compileTwiml(`<Response><Gather input="speech" language="de-DE" speechModel="${model}"/></Response>`, { documentUrl: 'https://app.example.com/t', method: 'POST' });
      expect(actions.find((a) => a.type === 'speech_gather')!.option).to.include({ provider, language: 'de-DE' });
    }
    expect(() => compileTwiml('<Response><Gather input="speech" language="de-DE" speechModel="phone_call"/></Response>', { documentUrl: 'https://app.example.com/t', method: 'POST' })).to.throw(
      /de-DE is not supported/,
    );
  });

  it('speech_gather (the TwiML <Gather input="speech" speechModel="cartesia_…"> path) with provider cartesia: the answer is what Cartesia heard', async () => {
    const { db, cid, number } = await bench.number([{ type: 'answer' }, { type: 'speech_gather', option: { provider: 'cartesia', language: 'en-US', timeout: 5000 } }, { type: 'hangup' }]);
    const before = vendor.sessions.length;
    // spoken words (the VAD that starts and ends the answer does not take a tone for a voice); the stand-in names them by their pitch
    await bench.call(number, { speech: 'I would like to pay my bill.' }, 800, true);
    const { af } = await bench.endOf(db, cid);
    expect(af.end_reason).to.not.equal('error');
    const s = vendor.sessions[before]!;
    expect(s.controls, 'the answer ended: the recogniser drained').to.include('done');
    expect(s.finals.length).to.be.greaterThan(0);
    expect((af as unknown as { variables: Record<string, string> }).variables['svc.speech.result']).to.equal(s.finals.join(' '));
  });

  it('a refused key: ai_talk ends with "cartesia: the API key was refused (HTTP 401)" and an aicall_stt_failed event; the key is in neither', async () => {
    process.env.CARTESIA_API_KEY = 'wrong-cartesia-key-987654';
    const { db, cid, number } = await bench.aiNumber('cartesia');
    await bench.call(number, [{ hz: 600, ms: 600 }], 1000, true);
    const { af, events } = await bench.endOf(db, cid);
    expect(af.end_reason).to.equal('error');
    expect(af.error).to.include('ai_talk: cartesia: the API key was refused (HTTP 401)');
    const failed = events.find((e) => e.event_type === 'aicall_stt_failed');
    expect(failed?.data).to.include({ stt_type: 'cartesia' });
    expect(String(failed?.data.reason)).to.include('401');
    expect(JSON.stringify([af, events])).to.not.include('wrong-cartesia-key');
  });

  it('a vendor URL on a private address the egress policy does not open: ai_talk ends saying so, nothing connects', async () => {
    process.env.EGRESS_ALLOW_CIDRS = '';
    const before = vendor.sessions.length;
    const { db, cid, number } = await bench.aiNumber('cartesia');
    await bench.call(number, [{ hz: 600, ms: 600 }], 1000, true);
    const { af, events } = await bench.endOf(db, cid);
    expect(af.error).to.include('cartesia: the egress policy refused the vendor URL');
    expect(events.map((e) => e.event_type)).to.include('aicall_stt_failed');
    expect(vendor.sessions.length).to.equal(before);
  });
});
