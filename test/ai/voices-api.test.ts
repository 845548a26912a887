// The voices an AI may name over the API: a tts_type / stt_type / engine_model with no real adapter
// is a 400 naming it and listing what works (never accepted and spoken later with another voice);
// the values that have adapters are accepted; a refused update keeps what was stored.
import { expect } from 'chai';
import request from 'supertest';
import { useTestApp, type Fixture, type TestApp } from '../../testkit/api';
import { ConfigError, loadConfig } from '../../core/config';
import { VENDOR_ENV } from '../../core/speech/vendors';
import { aisRepo } from '../../core/repos/ais';
import { aicallsRepo } from '../../core/repos/ai-calls';
import { VENDOR_TTS_TYPES } from '../../core/speech/voices';

describe('ai: voices an AI may name (API)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let f: Fixture;
  const api = () => request(t.app);
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${f.token}`);

  useTestApp((s) => ({ t, f } = s));

  const create = (extra: Record<string, unknown>) => auth(api().post('/v1.0/ais')).send({ name: 'voice bot', engine_model: 'openai.gpt-5', ...extra });

  for (const tts of ['hume', 'fish', 'piper', 'xtts', 'no-such-voice']) {
    it(`refuses tts_type "${tts}" (no adapter) with a 400 naming it and listing what works`, async () => {
      const r = await create({ tts_type: tts });
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body.error.reason).to.equal('INVALID_ARGUMENT');
      expect(r.body.error.message).to.include(`"${tts}"`).and.include('elevenlabs').and.include('provider_a');
      expect(r.body.error.details[0]).to.deep.include({ field: 'tts_type' });
    });
  }

  it('refuses a stt_type with no adapter (and such a parameter.stt_fallback), accepts cartesia / elevenlabs, and refuses an engine_model target it cannot reach', async () => {
    for (const [field, body] of [
      ['stt_type', { stt_type: 'gcp' }],
      ['parameter.stt_fallback', { stt_type: 'deepgram', parameter: { stt_fallback: 'whisper-local' } }],
      ['parameter.stt_fallback', { parameter: { stt_fallback: 7 } }],
    ] as const) {
      const r = await create(body);
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body.error.message).to.include('stt');
      expect(r.body.error.details[0].field).to.equal(field);
    }
    for (const stt of ['cartesia', 'elevenlabs']) {
      const r = await create({ stt_type: stt, parameter: { stt_fallback: 'deepgram' } });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.stt_type).to.equal(stt);
    }
    const r = await create({ engine_model: 'anthropic.claude-9' });
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    expect(r.body.error.message).to.include('anthropic').and.include('openai.<model>');
  });

  it('accepts the voices with adapters, and a refused update keeps the stored voice', async () => {
    for (const tts of ['elevenlabs', 'cartesia', 'deepgram', 'openai', 'azure', 'lmnt', 'provider_b', '']) {
      const r = await create({ tts_type: tts, stt_type: 'deepgram', engine_model: 'grok.grok-3' });
      expect(r.status, `${tts}: ${JSON.stringify(r.body)}`).to.equal(200);
      expect(r.body.tts_type).to.equal(tts);
    }
    const ok = await create({ tts_type: 'cartesia' });
    const bad = await auth(api().put(`/v1.0/ais/${ok.body.id}`)).send({ tts_type: 'sarvam' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.include('"sarvam"');
    const now = await auth(api().get(`/v1.0/ais/${ok.body.id}`));
    expect(now.body.tts_type).to.equal('cartesia');
  });

  it('reads <VENDOR>_BASE_URL (default the public endpoint) and <VENDOR>_API_KEY; a bad URL stops the start without showing the key', () => {
    const base = { DATABASE_URL: 'postgres://x/y', REDIS_URL: 'redis://127.0.0.1:1', JWT_SECRET: 'j'.repeat(40) };
    const c = loadConfig({ ...base, CARTESIA_BASE_URL: 'http://127.0.0.1:9/', CARTESIA_API_KEY: 'ca-secret-value' }, { persistSecret: false });
    expect(c.voices.cartesia).to.deep.equal({ baseUrl: 'http://127.0.0.1:9', apiKey: 'ca-secret-value' });
    expect(c.voices.elevenlabs).to.deep.equal({ baseUrl: 'https://api.elevenlabs.io', apiKey: '' });
    expect(c.voices.openai.baseUrl).to.equal('https://api.openai.com/v1');
    try {
      loadConfig({ ...base, ELEVENLABS_BASE_URL: 'ftp://nope', ELEVENLABS_API_KEY: ' ' }, { persistSecret: false });
      expect.fail('accepted');
    } catch (e) {
      expect(e).to.be.instanceOf(ConfigError);
      expect((e as ConfigError).problems.join('\n'))
        .to.include('ELEVENLABS_BASE_URL')
        .and.include('ELEVENLABS_API_KEY: ');
      expect((e as ConfigError).problems.join('\n')).to.include('1 characters');
    }
  });

  it("validates every vendor's two variables and hands on the key trimmed", () => {
    const base = { DATABASE_URL: 'postgres://x/y', REDIS_URL: 'redis://127.0.0.1:1', JWT_SECRET: 'j'.repeat(40) };
    const bad = Object.fromEntries(
      VENDOR_TTS_TYPES.flatMap((v) => [
        [`${VENDOR_ENV[v]}_BASE_URL`, 'ftp://nope'],
        [`${VENDOR_ENV[v]}_API_KEY`, ' '],
      ]),
    );
    try {
      loadConfig({ ...base, ...bad }, { persistSecret: false });
      expect.fail('accepted');
    } catch (e) {
      expect(e).to.be.instanceOf(ConfigError);
      const said = (e as ConfigError).problems.join('\n');
      for (const key of Object.keys(bad)) expect(said, key).to.include(`${key}: `);
    }
    const c = loadConfig({ ...base, LMNT_API_KEY: ' lmnt-key\n' }, { persistSecret: false });
    expect(c.voices.lmnt.apiKey).to.equal('lmnt-key');
    // two-part keys: AWS's and PlayHT's own variables, joined as `<id>:<secret>`; the region picks Polly's endpoint
    const two = loadConfig({ ...base, AWS_ACCESS_KEY_ID: 'AKIDX', AWS_SECRET_ACCESS_KEY: 's/x', AWS_REGION: 'eu-west-2', PLAYHT_USER_ID: 'u1', PLAYHT_API_KEY: 'k1' }, { persistSecret: false });
    expect(two.voices.aws).to.deep.equal({ baseUrl: 'https://polly.eu-west-2.amazonaws.com', apiKey: 'AKIDX:s/x', region: 'eu-west-2' });
    expect(two.voices.playht.apiKey).to.equal('u1:k1');
    expect(() => loadConfig({ ...base, AWS_REGION: 'Mars 1' }, { persistSecret: false })).to.throw(ConfigError, /AWS_REGION/);
  });

  it('a flow whose talk names a voice talk cannot speak (a cloud voice, or none at all) is a 400 naming it', async () => {
    for (const provider of ['elevenlabs', 'hume']) {
      const r = await auth(api().post('/v1.0/flows')).send({ name: 'f', actions: [{ type: 'talk', option: { text: 'hello', provider } }] });
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body.error.message).to.include(provider).and.include('provider_a');
    }
    const ok = await auth(api().post('/v1.0/flows')).send({ name: 'f', actions: [{ type: 'talk', option: { text: 'hello', provider: 'provider_b' } }] });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
  });

  it('accepts aws, google, rime and playht; a two-part key (aws `<id>:<secret>`) is masked, its secret never shown', async () => {
    for (const tts of ['aws', 'google', 'rime', 'playht']) {
      const r = await create({ tts_type: tts });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.tts_type).to.equal(tts);
    }
    const key = 'AKIDPAIRTEST0000:aws/secret+part/0123456789';
    const r = await create({ tts_type: 'aws', parameter: { tts_key: key, tts_fallback: 'rime' } });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(JSON.stringify(r.body)).to.not.include('aws/secret+part');
    expect(r.body.parameter.tts_key).to.match(/^AKI\*+6789$/);
  });

  it("parameter.tts_fallback must name a voice with an adapter; the AI's own key (parameter.tts_key) is never returned whole", async () => {
    for (const parameter of [{ tts_fallback: 'hume' }, { tts_fallback: { tts_type: 'fish' } }, { tts_fallback: 7 }, { tts_first_byte_ms: 5 }]) {
      const r = await create({ tts_type: 'elevenlabs', parameter });
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body.error.details[0].field).to.match(/^parameter\./);
    }
    const key = 'el-secret-0123456789abcdef';
    const r = await create({ tts_type: 'elevenlabs', parameter: { tts_key: key, tts_fallback: { tts_type: 'cartesia' }, tts_first_byte_ms: 800 } });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(JSON.stringify(r.body)).to.not.include(key);
    expect(r.body.parameter.tts_key).to.match(/^el-\*+cdef$/);
    const got = await auth(api().get(`/v1.0/ais/${r.body.id}`));
    expect(JSON.stringify(got.body)).to.not.include(key);
    expect(got.body.parameter.tts_fallback).to.deep.equal({ tts_type: 'cartesia' });
  });

  it("the fallback voice's own key is masked too, in the AI and in its aicalls (which copy the AI's parameter)", async () => {
    const [key, fbKey] = ['el-secret-0123456789abcdef', 'ca-fallback-secret-9876543210'];
    const r = await create({ tts_type: 'elevenlabs', parameter: { tts_key: key, tts_fallback: { tts_type: 'cartesia', tts_key: fbKey } } });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    for (const body of [r.body, (await auth(api().get(`/v1.0/ais/${r.body.id}`))).body]) {
      expect(JSON.stringify(body)).to.not.include(fbKey);
      expect(body.parameter.tts_fallback.tts_type).to.equal('cartesia');
      expect(body.parameter.tts_fallback.tts_key).to.match(/^ca-\*+3210$/);
    }
    // an aicall is created with the AI's stored parameter, as core/ai/session.ts does
    const ai = await aisRepo(t.ctx.db).get(f.customer.id, r.body.id);
    const call = await aicallsRepo(t.ctx.db).create(f.customer.id, {
      assistance_type: 'ai',
      assistance_id: r.body.id,
      reference_type: 'call',
      ai_tts_type: 'elevenlabs',
      parameter: ai!.parameter,
    });
    const one = await auth(api().get(`/v1.0/aicalls/${call.id}`));
    const list = await auth(api().get('/v1.0/aicalls'));
    expect([one.status, list.status]).to.deep.equal([200, 200]);
    expect(one.body.parameter.tts_key).to.match(/^el-\*+cdef$/);
    for (const body of [one.body, list.body]) expect(JSON.stringify(body)).to.not.include(key).and.not.include(fbKey);
  });
});
