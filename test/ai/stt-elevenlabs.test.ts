// stt_type "elevenlabs" on real calls: sipp plays tones into a call; ElevenLabs' realtime STT stand-in
// (testkit/speech/elevenlabs-stt-server.ts: its wire protocol on loopback, VAD commits) names each
// utterance by its tone. ai_talk hears the caller through it, transcribe_start stores its commits;
// a refused key, a refused vendor URL and the vendor failing mid-call end ai_talk with a clear error
// and an aicall_stt_failed event, unless parameter.stt_fallback names another recogniser, which then
// hears the caller (aicall_stt_fallback says so).
import { expect } from 'chai';
import { FakeElevenLabsStt } from '../../testkit/speech/elevenlabs-stt-server';
import { FakeCartesiaStt } from '../../testkit/speech/cartesia-stt-server';
import { SttCalls } from '../../testkit/speech/stt-calls';
import { sleep, until } from '../../testkit/media-app/harness';
import { ElevenLabsSttProvider } from '../../media-engine/stt';

const KEY = 'xi-stt-key-0123456789';
const CARTESIA_KEY = 'cartesia-fallback-key-0123';
const ENV = ['ELEVENLABS_BASE_URL', 'ELEVENLABS_API_KEY', 'CARTESIA_BASE_URL', 'CARTESIA_API_KEY', 'EGRESS_ALLOW_CIDRS'];

describe('stt_type elevenlabs (ElevenLabs realtime STT) on live calls', function () {
  this.timeout(150_000);
  let bench: SttCalls;
  let vendor: FakeElevenLabsStt;
  let cartesia: FakeCartesiaStt;
  const saved = { ...process.env };

  before(async () => {
    vendor = await new FakeElevenLabsStt(KEY).listen();
    cartesia = await new FakeCartesiaStt(CARTESIA_KEY).listen();
    for (const v of [vendor, cartesia]) {
      v.words.set(600, 'what time is it');
      v.words.set(900, 'thank you');
    }
    process.env.ELEVENLABS_BASE_URL = vendor.baseUrl;
    process.env.ELEVENLABS_API_KEY = KEY;
    process.env.CARTESIA_BASE_URL = cartesia.baseUrl;
    process.env.CARTESIA_API_KEY = CARTESIA_KEY;
    process.env.EGRESS_ALLOW_CIDRS = '127.0.0.0/8';
    bench = await SttCalls.start();
  });
  after(async () => {
    await bench?.close();
    await vendor?.close();
    await cartesia?.close();
    for (const k of ENV) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });
  afterEach(() => {
    process.env.ELEVENLABS_API_KEY = KEY;
    process.env.EGRESS_ALLOW_CIDRS = '127.0.0.0/8';
    vendor.latencyMs = 0;
    vendor.failAfterMs = 0;
  });

  it('the URL asks for scribe_v2_realtime, VAD commits with word times, PCM at the stream rate (16 kHz on a wideband leg)', () => {
    const p = new ElevenLabsSttProvider({ baseUrl: 'https://api.elevenlabs.io', apiKey: 'k' });
    const wide = p.urlFor({ sampleRate: 16000, language: 'fr-FR' });
    expect(wide.origin + wide.pathname).to.equal('wss://api.elevenlabs.io/v1/speech-to-text/realtime');
    expect(Object.fromEntries(wide.searchParams)).to.include({ model_id: 'scribe_v2_realtime', audio_format: 'pcm_16000', commit_strategy: 'vad', include_timestamps: 'true', language_code: 'fr' });
    expect(p.urlFor({}).searchParams.get('audio_format')).to.equal('pcm_8000');
  });

  it('ai_talk: the caller is heard through ElevenLabs (its VAD commit is the user message), key in xi-api-key', async () => {
    vendor.latencyMs = 150;
    const before = vendor.sessions.length;
    const { db, cid, number } = await bench.aiNumber('elevenlabs');
    await bench.call(number, [{ hz: 600, ms: 900 }]);
    expect(await bench.userMessages(db, cid)).to.deep.equal(['what time is it']);
    const s = vendor.sessions[before]!;
    expect(s.headers['xi-api-key']).to.equal(KEY);
    expect(s.query.get('audio_format')).to.equal('pcm_8000');
    expect(s.bytes).to.be.greaterThan(16000);
    expect(
      s.controls.filter((c) => c !== 'commit'),
      'nothing but audio chunks and the last commit',
    ).to.deep.equal([]);
  });

  it('a G.722 (wideband) call: the recogniser is asked for pcm_16000 and gets 32,000 bytes of PCM a second', async () => {
    const before = vendor.sessions.length;
    const { number } = await bench.aiNumber('elevenlabs', {}, 6);
    const g722 = 'm=audio PORT RTP/AVP 9 101\na=rtpmap:9 G722/8000\na=rtpmap:101 telephone-event/8000\na=fmtp:101 0-15';
    const done = bench.call(number, [], 1000, false, g722);
    const s = await until(() => (vendor.sessions[before]?.firstAudioAt ? vendor.sessions[before] : null), 15_000, 'audio at the recogniser');
    // past the connect-time backlog, which comes in one burst
    await sleep(1000);
    const [t0, b0] = [performance.now(), s.bytes];
    await sleep(2500);
    const rate = ((s.bytes - b0) * 1000) / (performance.now() - t0);
    await done;
    expect(s.query.get('audio_format')).to.equal('pcm_16000');
    expect(rate).to.be.within(32_000 * 0.75, 32_000 * 1.25);
  });

  it('transcribe_start with provider elevenlabs: each committed utterance is a transcript', async () => {
    const { db, cid, number } = await bench.transcribeNumber('elevenlabs');
    await bench.call(number, [{ hz: 900, ms: 800 }, { pauseMs: 900 }, { hz: 600, ms: 800 }], 800);
    const rows = await bench.transcripts(db, cid);
    expect(rows.map((r) => r.message)).to.deep.equal(['thank you', 'what time is it']);
  });

  it('a refused key: ai_talk ends with "elevenlabs: the API key was refused (HTTP 401)" and an aicall_stt_failed event', async () => {
    process.env.ELEVENLABS_API_KEY = 'wrong-xi-key-555555';
    const { db, cid, number } = await bench.aiNumber('elevenlabs');
    await bench.call(number, [{ hz: 600, ms: 600 }], 1000, true);
    const { af, events } = await bench.endOf(db, cid);
    expect(af.end_reason).to.equal('error');
    expect(af.error).to.include('ai_talk: elevenlabs: the API key was refused (HTTP 401)');
    expect(events.find((e) => e.event_type === 'aicall_stt_failed')?.data).to.include({ stt_type: 'elevenlabs' });
    expect(JSON.stringify([af, events])).to.not.include('wrong-xi-key');
  });

  it('a vendor URL the egress policy refuses: ai_talk ends saying so, nothing connects', async () => {
    process.env.EGRESS_ALLOW_CIDRS = '';
    const before = vendor.sessions.length;
    const { db, cid, number } = await bench.aiNumber('elevenlabs');
    await bench.call(number, [{ hz: 600, ms: 600 }], 1000, true);
    const { af } = await bench.endOf(db, cid);
    expect(af.error).to.include('elevenlabs: the egress policy refused the vendor URL');
    expect(vendor.sessions.length).to.equal(before);
  });

  it('the vendor failing mid-call with no fallback: ai_talk ends with the vendor error and an event', async () => {
    vendor.failAfterMs = 1000;
    const { db, cid, number } = await bench.aiNumber('elevenlabs');
    await bench.call(number, [{ hz: 600, ms: 600 }], 2500, true);
    const { af, events } = await bench.endOf(db, cid);
    expect(af.error).to.include('elevenlabs: the vendor reported transcriber_error');
    expect(events.map((e) => e.event_type))
      .to.include('aicall_stt_failed')
      .and.not.include('aicall_stt_fallback');
  });

  it('the vendor failing mid-call with parameter.stt_fallback cartesia: Cartesia hears the caller, with an aicall_stt_fallback event', async () => {
    vendor.failAfterMs = 1000;
    const before = cartesia.sessions.length;
    const { db, cid, number } = await bench.aiNumber('elevenlabs', { stt_fallback: 'cartesia' });
    await bench.call(number, [{ hz: 600, ms: 900 }], 2500);
    expect(await bench.userMessages(db, cid)).to.deep.equal(['what time is it']);
    expect(cartesia.sessions.length).to.equal(before + 1);
    const { af, events } = await bench.endOf(db, cid);
    expect(af.end_reason).to.not.equal('error');
    const fb = events.find((e) => e.event_type === 'aicall_stt_fallback');
    expect(fb?.data).to.include({ stt_type: 'elevenlabs', fallback_stt_type: 'cartesia' });
    expect(String(fb?.data.reason)).to.include('transcriber_error');
    expect(events.map((e) => e.event_type)).to.not.include('aicall_stt_failed');
  });

  it("parameter.stt_key is ElevenLabs' key; the fallback (Cartesia) takes the platform's CARTESIA_API_KEY", async () => {
    process.env.ELEVENLABS_API_KEY = 'platform-xi-key-refused-1';
    vendor.failAfterMs = 1000;
    const [xi, ca] = [vendor.sessions.length, cartesia.sessions.length];
    const { db, cid, number } = await bench.aiNumber('elevenlabs', { stt_fallback: 'cartesia', stt_key: KEY });
    await bench.call(number, [{ hz: 600, ms: 900 }], 2500);
    expect(await bench.userMessages(db, cid)).to.deep.equal(['what time is it']);
    expect(vendor.sessions[xi]!.headers['xi-api-key']).to.equal(KEY);
    expect(cartesia.sessions[ca]!.headers['x-api-key']).to.equal(CARTESIA_KEY);
  });
});
