// talk and speakings through a cloud voice the operator mapped (TTS_PROVIDER_A=elevenlabs:<voice>,
// TTS_PROVIDER_B=aws; provider_c left local): sipp calls numbers whose flows talk, and the caller's
// RTP carries the mapped vendor's marker tone (its stand-in on loopback), or espeak-ng's speech for the
// unmapped provider. A vendor refusing the key fails the talk and so the flow (the error names the
// vendor, the activeflow's event says it), with nothing else spoken; a speaking on a live call speaks
// through the mapped vendor too. Bad mappings are refused when the configuration is loaded.
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../core/config';
import { sipp, until } from '../../testkit/media-app/harness';
import { aiCallerScenario, TimedSink } from '../../testkit/ai/audio';
import { heardPackets, MARKER_FREQS, VoiceCalls } from '../../testkit/ai/voice-calls';
import { api, closeStack, freshStack, inboundSetup, progressingCall, type Stack } from '../../testkit/speech/support';
import { MARKER_HZ, type StandIn } from '../../testkit/vendors/marker';
import { startElevenLabs } from '../../testkit/vendors/elevenlabs';
import { AWS_TEST_KEY_ID, AWS_TEST_SECRET, startPolly } from '../../testkit/vendors/aws';

const TEXT = 'Thank you for calling. Your order has been shipped and will arrive tomorrow.';

describe('talk and speakings through a cloud voice mapped by the operator', function () {
  this.timeout(120_000);
  let s: Stack;
  let eleven: StandIn;
  let polly: StandIn;
  const calls = new VoiceCalls(() => s.p, '89922105');

  before(async () => {
    eleven = await startElevenLabs({ firstByteMs: 50 });
    polly = await startPolly({ firstByteMs: 50 });
    s = await freshStack({
      EGRESS_ALLOW_CIDRS: '127.0.0.0/8',
      TTS_PROVIDER_A: 'elevenlabs:talkVoice123',
      TTS_PROVIDER_B: 'aws',
      ELEVENLABS_BASE_URL: eleven.url,
      ELEVENLABS_API_KEY: 'el-test-key',
      AWS_BASE_URL: polly.url,
      AWS_ACCESS_KEY_ID: AWS_TEST_KEY_ID,
      AWS_SECRET_ACCESS_KEY: AWS_TEST_SECRET,
    });
  });
  after(async () => {
    await closeStack(s);
    await eleven?.close();
    await polly?.close();
  });

  const talkFlow = (option: Record<string, unknown>) => [{ type: 'answer' }, { type: 'talk', option: { text: TEXT, ...option } }, { type: 'hangup' }];

  it('talk without a provider (provider_a) speaks with the mapped vendor and its voice id; the flow goes on', async () => {
    const before = eleven.requests.length;
    const { db, cid, number } = await calls.numberFor(talkFlow({}));
    const tones = await calls.call(number);
    expect(tones.get(MARKER_HZ.elevenlabs) ?? 0, JSON.stringify([...tones])).to.be.greaterThan(50);
    for (const f of MARKER_FREQS) if (f !== MARKER_HZ.elevenlabs) expect(tones.get(f) ?? 0, `${f} Hz`).to.equal(0);
    expect(tones.get('none') ?? 0, 'no espeak-ng').to.be.lessThan(5);
    expect(eleven.requests.length).to.equal(before + 1);
    expect(eleven.requests.at(-1)!.url).to.match(/^\/v1\/text-to-speech\/talkVoice123\/stream\?/);
    const { af } = await calls.flowEnd(db, cid);
    expect(af.end_reason, af.error).to.not.equal('error');
  });

  it("talk with provider_b speaks through aws (SigV4 checked by the stand-in), the action's voice_id as the vendor's voice", async () => {
    const { number } = await calls.numberFor(talkFlow({ provider: 'provider_b', voice_id: 'Matthew' }));
    const tones = await calls.call(number);
    expect(tones.get(MARKER_HZ.aws) ?? 0, JSON.stringify([...tones])).to.be.greaterThan(50);
    expect(polly.requests.at(-1)!.body).to.deep.include({ VoiceId: 'Matthew', OutputFormat: 'pcm' });
  });

  it('talk with provider_c (not mapped) stays the local voice: espeak-ng, no vendor asked', async () => {
    const asked = eleven.requests.length + polly.requests.length;
    const { number } = await calls.numberFor(talkFlow({ provider: 'provider_c' }));
    const tones = await calls.call(number);
    expect(tones.get('none') ?? 0, JSON.stringify([...tones])).to.be.greaterThan(20);
    for (const f of MARKER_FREQS) expect(tones.get(f) ?? 0, `${f} Hz`).to.equal(0);
    expect(eleven.requests.length + polly.requests.length).to.equal(asked);
  });

  it('the vendor refusing the key fails talk and the flow (error naming the vendor, in the activeflow event); no other voice speaks', async () => {
    eleven.options.apiKey = 'a-key-the-platform-does-not-have';
    try {
      const { db, cid, number } = await calls.numberFor([
        { type: 'answer' },
        { type: 'talk', option: { text: TEXT } },
        { type: 'talk', option: { text: 'Never said.', provider: 'provider_c' } },
        { type: 'hangup' },
      ]);
      const tones = await calls.call(number);
      expect(heardPackets(tones), JSON.stringify([...tones])).to.equal(0);
      const { af, events } = await calls.flowEnd(db, cid);
      expect(af.end_reason).to.equal('error');
      expect(af.error).to.include('elevenlabs: the API key was refused (HTTP 401)');
      expect(af.error).to.not.include('el-test-key');
      const ended = events.filter((e) => e.event_type === 'activeflow_updated').find((e) => String(e.data.error ?? '').includes('elevenlabs'));
      expect(ended, JSON.stringify(events.map((e) => [e.event_type, e.data.status, e.data.error]))).to.not.equal(undefined);
    } finally {
      delete eleven.options.apiKey;
    }
  });

  it('a speaking (provider_a) on a live call speaks through the mapped vendor', async () => {
    const { f, number } = await inboundSetup(s, [{ type: 'answer' }, { type: 'sleep', option: { duration: 6000 } }, { type: 'hangup' }]);
    const a = api(s.t, f);
    const sink = await TimedSink.open();
    try {
      const caller = sipp(aiCallerScenario(`${number}@127.0.0.1:${s.p.sipPort}`, sink.port, []), [`127.0.0.1:${s.p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '40s'], {
        killAfterMs: 45_000,
      });
      const call = await progressingCall(s, f.customer.id);
      const created = await a.post('/speakings', { reference_type: 'call', reference_id: call.id });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const id = created.body.id as string;
      await until(async () => (await a.get(`/speakings/${id}`)).body.status === 'active', 10_000, 'speaking active');
      const before = eleven.requests.length;
      expect((await a.post(`/speakings/${id}/say`, { text: TEXT })).status).to.equal(200);
      await until(() => eleven.requests.length > before, 10_000, 'the vendor asked');
      const r = await caller.done;
      expect(r.code, r.errors).to.equal(0);
      const tones = sink.dominantTones(MARKER_FREQS);
      expect(tones.get(MARKER_HZ.elevenlabs) ?? 0, JSON.stringify([...tones])).to.be.greaterThan(50);
      expect(tones.get('none') ?? 0, 'no espeak-ng').to.be.lessThan(5);
    } finally {
      sink.close();
    }
  });

  it('refuses a mapping to a voice without an adapter, and accepts <vendor> alone', () => {
    const base = { DATABASE_URL: 'postgres://x/y', REDIS_URL: 'redis://127.0.0.1:1', JWT_SECRET: 'j'.repeat(40) };
    for (const bad of ['hume:abc', 'espeak-ng', ':voice']) {
      expect(() => loadConfig({ ...base, TTS_PROVIDER_B: bad }, { persistSecret: false }), bad)
        .to.throw(ConfigError)
        .with.property('problems')
        .that.satisfies((p: string[]) => p.some((x) => x.startsWith('TTS_PROVIDER_B: ') && x.includes('not a cloud voice')));
    }
    const c = loadConfig({ ...base, TTS_PROVIDER_A: 'rime', TTS_PROVIDER_C: ' google:en-US-Neural2-F ' }, { persistSecret: false });
    expect(c.talkVoices).to.deep.equal({ provider_a: { type: 'rime', voice: '' }, provider_c: { type: 'google', voice: 'en-US-Neural2-F' } });
  });
});
