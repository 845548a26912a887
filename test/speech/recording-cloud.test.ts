// Recordings transcribed by the cloud engines (media-app/speech/recording-cloud.ts): a real call
// (sipp plays tones) is recorded; transcribe_recording with provider google (the flow) and POST
// /transcribes with provider openai (REST) send its WAV, at its own rate, to the engines' stand-ins
// (testkit/speech/file-stt-servers.ts: Google Speech-to-Text v1 and OpenAI's transcriptions endpoint on
// loopback, recognising by tone), and each recognised utterance is a transcript. A refused key
// leaves the transcribe done without segments; an engine on a refused address is never reached;
// a file engine on a live call is a 400; Google's one-minute limit is met by sending pieces.
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { expect } from 'chai';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import { transcribeCloud } from '../../media-app/speech/recording-cloud';
import { FakeGoogleStt, FakeOpenAiTranscribe } from '../../testkit/speech/file-stt-servers';
import { api, closeStack, freshStack, inboundSetup, type Stack } from '../../testkit/speech/support';
import { aiCallerScenario, tonePcap, TimedSink } from '../../testkit/ai/audio';
import { sipp, until } from '../../testkit/media-app/harness';

const GKEY = 'google-api-key-0123456789';
const OKEY = 'sk-openai-transcribe-0123456789';
const ENV = ['GOOGLE_STT_BASE_URL', 'GOOGLE_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_API_KEY'];

describe('recordings transcribed by Google and OpenAI', function () {
  this.timeout(150_000);
  let s: Stack;
  let google: FakeGoogleStt;
  let openai: FakeOpenAiTranscribe;
  let dir: string;
  const saved = { ...process.env };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rec-cloud-'));
    google = await new FakeGoogleStt(GKEY).listen();
    openai = await new FakeOpenAiTranscribe(OKEY).listen();
    for (const e of [google, openai]) {
      e.words.set(600, 'what time is it');
      e.words.set(900, 'thank you');
    }
    process.env.GOOGLE_STT_BASE_URL = google.origin;
    process.env.GOOGLE_API_KEY = GKEY;
    process.env.OPENAI_BASE_URL = `${openai.origin}/v1`;
    process.env.OPENAI_API_KEY = OKEY;
    s = await freshStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
  });
  after(async () => {
    await closeStack(s);
    await google?.close();
    await openai?.close();
    fs.rmSync(dir, { recursive: true, force: true });
    for (const k of ENV) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });

  /** A recorded call with two tones (600 Hz, then 900 Hz); the flow's transcribe_recording uses `provider`. */
  async function recordedCall(provider: string) {
    const { f, number } = await inboundSetup(s, [
      { type: 'answer' },
      { type: 'recording_start', option: {} },
      { type: 'sleep', option: { duration: 4500 } },
      { type: 'recording_stop' },
      { type: 'transcribe_recording', option: { provider, language: 'en-US', direction: 'in' } },
      { type: 'sleep', option: { duration: 500 } },
      { type: 'hangup' },
    ]);
    const file = path.join(dir, `${provider}.pcap`);
    tonePcap([{ hz: 600, ms: 800 }, { pauseMs: 900 }, { hz: 900, ms: 800 }], file, { trailMs: 500 });
    const sink = await TimedSink.open();
    try {
      const r = await sipp(aiCallerScenario(`${number}@127.0.0.1:${s.p.sipPort}`, sink.port, [{ atMs: 800, pcap: file }]), [`127.0.0.1:${s.p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], {
        killAfterMs: 60_000,
      }).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    const db = s.t.ctx.db;
    const c = await db('calls').where({ customer_id: f.customer.id }).first();
    const rec = await until(async () => db('recordings').where({ reference_id: c!.id, status: 'ended' }).first(), 15_000, 'recording ended');
    return { f, rec: rec as { id: string } };
  }

  async function doneSegments(transcribeId: string) {
    const db = s.t.ctx.db;
    await until(async () => (await db('transcribes').where({ id: transcribeId }).first())?.status === 'done', 30_000, 'transcribe done');
    return (await db('transcripts').where({ transcribe_id: transcribeId }).orderBy('offset_ms')) as { message: string; direction: string; offset_ms: number }[];
  }

  it('transcribe_recording with provider google (flow), then POST /transcribes with provider openai: both engines hear the two utterances', async () => {
    const g0 = google.requests.length;
    const o0 = openai.requests.length;
    const { f, rec } = await recordedCall('google');
    const db = s.t.ctx.db;
    const gt = await until(async () => db('transcribes').where({ reference_id: rec.id, provider: 'google' }).first(), 15_000, 'google transcribe');
    const gsegs = await doneSegments(gt.id);
    expect(gsegs.map((x) => x.message)).to.deep.equal(['what time is it', 'thank you']);
    expect(gsegs.every((x) => x.direction === 'in')).to.equal(true);
    expect(gsegs[1]!.offset_ms - gsegs[0]!.offset_ms).to.be.within(1300, 2100);
    const greq = google.requests[g0]!;
    expect(greq.headers['x-goog-api-key']).to.equal(GKEY);
    expect(greq.rate, 'the WAV at its own rate (a PCMU call: 8 kHz)').to.equal(8000);
    expect(greq.fields).to.include({ encoding: 'LINEAR16', languageCode: 'en-US' });

    const a = api(s.t, f);
    const r = await a.post('/transcribes', { reference_type: 'recording', reference_id: rec.id, language: 'en-US', direction: 'in', provider: 'openai' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.include({ provider: 'openai', reference_type: 'recording' });
    expect(r.body.id, 'another provider is another transcribe').to.not.equal(gt.id);
    const osegs = await doneSegments(r.body.id);
    expect(osegs.map((x) => x.message)).to.deep.equal(['what time is it', 'thank you']);
    const oreq = openai.requests[o0]!;
    expect(oreq.headers.authorization).to.equal(`Bearer ${OKEY}`);
    expect(oreq.rate).to.equal(8000);
    expect(oreq.fields).to.include({ model: 'whisper-1', response_format: 'verbose_json', language: 'en' });

    // the same engine and language again: the existing transcribe (voipbin)
    const again = await a.post('/transcribes', { reference_type: 'recording', reference_id: rec.id, language: 'en-US', provider: 'openai' });
    expect(again.body.id).to.equal(r.body.id);

    // a refused key: the transcribe ends, nothing stored, the key nowhere in it
    process.env.OPENAI_API_KEY = 'sk-wrong-key-999999';
    try {
      const bad = await a.post('/transcribes', { reference_type: 'recording', reference_id: rec.id, language: 'en-GB', provider: 'openai' });
      expect(bad.status).to.equal(200);
      expect(await doneSegments(bad.body.id)).to.deep.equal([]);
      expect(openai.seen.at(-1)!.authorization).to.equal('Bearer sk-wrong-key-999999');
    } finally {
      process.env.OPENAI_API_KEY = OKEY;
    }
  });

  it('a file engine on a live call, or an unknown one, is a 400 naming the field; voipbin gcp is Google for a recording', async () => {
    const { f } = await inboundSetup(s, [{ type: 'answer' }, { type: 'hangup' }]);
    const a = api(s.t, f);
    const live = await a.post('/transcribes', { reference_type: 'call', reference_id: '00000000-0000-4000-8000-000000000001', language: 'en-US', provider: 'google' });
    expect(live.status).to.equal(400);
    expect(live.body.error.message).to.include('recordings only');
    expect(live.body.error.details[0].field).to.equal('provider');
    const unknown = await a.post('/transcribes', { reference_type: 'recording', reference_id: '00000000-0000-4000-8000-000000000001', language: 'en-US', provider: 'whisper-local' });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.error.message).to.include('google').and.include('openai');
  });

  it('the egress policy: an engine on a private address is refused before anything is sent (Google by HTTP, OpenAI through its SDK)', async () => {
    const strict = new EgressPolicy(egressSettingsFromEnv({}));
    const pcm = { samples: new Int16Array(8000), rate: 8000 };
    const g0 = google.requests.length;
    const o0 = openai.requests.length;
    for (const engine of ['google', 'openai'] as const) {
      const ep = engine === 'google' ? { baseUrl: google.origin, apiKey: GKEY } : { baseUrl: `${openai.origin}/v1`, apiKey: OKEY };
      const err = await transcribeCloud(engine, pcm, 'en-US', strict, ep).then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).to.match(new RegExp(`^${engine}: the egress policy refused the vendor URL`));
      expect(err?.message).to.not.include(ep.apiKey);
    }
    expect(google.requests.length).to.equal(g0);
    expect(openai.requests.length).to.equal(o0);
  });

  it('Google: a recording longer than a minute goes in pieces, each result at its place in the file', async () => {
    const rate = 16000;
    const samples = new Int16Array(rate * 70);
    const tone = (atSec: number, hz: number) => {
      for (let i = 0; i < rate; i++) samples[atSec * rate + i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / rate));
    };
    tone(10, 600);
    tone(62, 900);
    const g0 = google.requests.length;
    const allow = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));
    const segs = await transcribeCloud('google', { samples, rate }, 'en-US', allow, { baseUrl: google.origin, apiKey: GKEY });
    expect(segs.map((x) => x.text)).to.deep.equal(['what time is it', 'thank you']);
    expect(segs[0]!.offsetMs).to.be.within(9900, 10_100);
    expect(segs[1]!.offsetMs).to.be.within(61_900, 62_100);
    const reqs = google.requests.slice(g0);
    expect(reqs.length).to.equal(2);
    expect(reqs.every((r) => r.seconds <= 60 && r.rate === 16000)).to.equal(true);
  });
});
