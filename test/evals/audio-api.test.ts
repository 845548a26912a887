// A call's two audio tracks over the API (docs/evals.md "Both tracks of a call"): the run's result names
// them (`audio`), GET /eval_runs/{id}/audio/{file} serves them over HTTP to the run's customer, with the
// customer-file headers; another customer's run, a file no call names, a file gone from storage are 404s
// in the error envelope, a malformed name a 400 naming it; and the route is in the OpenAPI document.
// The tracks are written as the worker writes them (storeCallAudio into the app's object store); a run
// over SIP keeps real ones in test/evals/audio-live.test.ts.
import { claimRun } from '../../testkit/evals/claimed';
import { expect } from 'chai';
import request from 'supertest';
import { useTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { evalRunsRepo } from '../../core/repos/eval-runs';
import { storageBackend } from '../../core/storage/backend';
import { CallAudio, storeCallAudio } from '../../evals/call-audio';
import { evalAudioKey } from '../../core/evals/audio';
import type { EvalCallAudio } from '../../core/evals/schema';
import { newId } from '../../core/ids';
import { bufferBody } from '../../testkit/buffer-body';

describe('eval runs API: the audio tracks of a call', () => {
  let t: TestApp;
  let f: Fixture;
  let other: Fixture;
  let runId: string;
  let audio: EvalCallAudio;
  let wav: { caller: Buffer; agent: Buffer };
  useTestApp((s) => ({ t, f } = s));
  const auth = (r: request.Test, fx = f) => r.set('Authorization', `Bearer ${fx.token}`);
  const fileOf = (url: string) => url.split('/').at(-1)!;

  before(async () => {
    other = await createFixture(t.ctx);
    const runs = evalRunsRepo(t.ctx.db);
    const scenario = { id: newId(), name: 'short', target: { type: 'number' as const, target: '+899560000009' }, caller: { language: 'en-US', turns: [{ hangup: true as const }] }, checks: [] };
    const run = await runs.create(f.customer.id, { scenarios: [scenario], calls: 1, concurrency: 1 });
    await claimRun(t.ctx.db, run.id, 'audio-api-test');
    const a = new CallAudio(60_000);
    for (let k = 0; k < 50; k++) a.onSent({ due: k * 20, pcm: new Int16Array(160).fill(k < 25 ? 3000 : 0) }, 0);
    for (let k = 0; k < 50; k++) a.onHeard({ at: 5 + k * 20, pcm: new Int16Array(160).fill(k >= 25 ? -2000 : 0), ts: k * 160, ssrc: 9 }, 0);
    const kept = a.finish(1000);
    wav = kept;
    audio = await storeCallAudio(storageBackend(t.ctx.config).files, { customerId: f.customer.id, runId: run.id, sipCallId: `x${newId()}@openvoice-evals` }, kept);
    const result = { scenario_id: scenario.id, call_id: newId(), sip_call_id: 'x', ended_by: 'caller' as const, transcript: [], audio, turns: [], checks: [], passed: true };
    await runs.end(run.id, 'audio-api-test', 'finished', [result]);
    runId = run.id;
  });

  it("the run's result names both tracks; each is served as a WAV with the customer-file headers", async () => {
    const run = await auth(request(t.app).get(`/v1.0/eval_runs/${runId}`)).expect(200);
    // the last heard packet (at 985 ms) runs 5 ms past the call's end: the tracks are kept to it
    expect(run.body.results[0].audio).to.deep.equal({ ...audio, duration_ms: 1005, call_ms: 1000, truncated: false });
    for (const [url, bytes] of [
      [audio.caller_url, wav.caller],
      [audio.agent_url, wav.agent],
    ] as const) {
      const r = await auth(request(t.app).get(url)).buffer(true).parse(bufferBody).expect(200);
      expect(r.headers['content-type']).to.equal('audio/wav');
      expect(r.headers['x-content-type-options']).to.equal('nosniff');
      expect(r.headers['content-length']).to.equal(String(bytes.length));
      expect(Buffer.compare(r.body as Buffer, bytes)).to.equal(0);
    }
    expect(wav.caller.readInt16LE(44)).to.equal(3000);
    expect(wav.agent.readInt16LE(44 + 2 * 8000 - 2)).to.equal(-2000);
  });

  it("another customer's run, a file no call names and a file gone from storage are 404s; a malformed name a 400; no credentials a 401", async () => {
    const theirs = await auth(request(t.app).get(audio.caller_url), other).expect(404);
    expect(theirs.body.error).to.include({ reason: 'RESOURCE_NOT_FOUND', message: 'eval run not found' });
    const unknown = await auth(request(t.app).get(`/v1.0/eval_runs/${runId}/audio/${'0'.repeat(32)}-caller.wav`)).expect(404);
    expect(unknown.body.error).to.include({ reason: 'FILE_NOT_FOUND', message: 'no call of this eval run has this audio track' });
    const noRun = await auth(request(t.app).get(`/v1.0/eval_runs/${newId()}/audio/${fileOf(audio.agent_url)}`)).expect(404);
    expect(noRun.body.error.reason).to.equal('RESOURCE_NOT_FOUND');
    const bad = await auth(request(t.app).get(`/v1.0/eval_runs/${runId}/audio/..%2Fsecret.wav`)).expect(400);
    expect(bad.body.error.reason).to.equal('INVALID_REQUEST_PARAMETER');
    expect(JSON.stringify(bad.body.error.details)).to.contain('file');
    await request(t.app).get(audio.caller_url).expect(401);
    await storageBackend(t.ctx.config).files.delete(evalAudioKey(f.customer.id, runId, fileOf(audio.agent_url)));
    const gone = await auth(request(t.app).get(audio.agent_url)).expect(404);
    expect(gone.body.error).to.include({ reason: 'FILE_NOT_FOUND', message: "the call's audio track is not in storage" });
  });

  // an <audio> element seeks with Range requests: without them it must download the whole track first
  it('a track answers Range requests: 206 with Content-Range, a suffix, 416 past the end, the whole file for several ranges', async () => {
    const url = audio.caller_url;
    const size = wav.caller.length;
    const get = (range: string) => auth(request(t.app).get(url)).set('Range', range).buffer(true).parse(bufferBody);
    const whole = await auth(request(t.app).get(url)).buffer(true).parse(bufferBody).expect(200);
    expect(whole.headers['accept-ranges']).to.equal('bytes');
    const part = await get('bytes=100-8099').expect(206);
    expect(part.headers).to.include({
      'content-range': `bytes 100-8099/${size}`,
      'content-length': '8000',
      'content-type': 'audio/wav',
      'accept-ranges': 'bytes',
      'x-content-type-options': 'nosniff',
    });
    expect(Buffer.compare(part.body as Buffer, wav.caller.subarray(100, 8100))).to.equal(0);
    const open = await get(`bytes=${size - 10}-`).expect(206);
    expect(open.headers['content-range']).to.equal(`bytes ${size - 10}-${size - 1}/${size}`);
    expect(Buffer.compare(open.body as Buffer, wav.caller.subarray(size - 10))).to.equal(0);
    const suffix = await get('bytes=-44').expect(206);
    expect(Buffer.compare(suffix.body as Buffer, wav.caller.subarray(size - 44))).to.equal(0);
    const beyond = await get(`bytes=0-${size + 1000}`).expect(206);
    expect(beyond.headers['content-range']).to.equal(`bytes 0-${size - 1}/${size}`);
    const past = await auth(request(t.app).get(url)).set('Range', `bytes=${size}-`).expect(416);
    expect(past.headers['content-range']).to.equal(`bytes */${size}`);
    expect(past.body.error).to.include({ reason: 'RANGE_NOT_SATISFIABLE' });
    const several = await get('bytes=0-9,20-29').expect(200);
    expect(Buffer.compare(several.body as Buffer, wav.caller)).to.equal(0);
  });

  it('is in the OpenAPI document: the route (audio/wav) and the result fields', async () => {
    const doc = (await request(t.app).get('/v1.0/openapi.json').expect(200)).body as { paths: Record<string, Record<string, { responses: Record<string, { content?: object }> }>> };
    const key = Object.keys(doc.paths).find((k) => k.endsWith('/eval_runs/{id}/audio/{file}'))!;
    expect(key, 'the route').to.be.a('string');
    expect(Object.keys(doc.paths[key]!.get!.responses['200']!.content!)).to.deep.equal(['audio/wav']);
    expect(doc.paths[key]!.get!.responses['404']).to.be.an('object');
    expect(doc.paths[key]!.get!.responses['416']).to.be.an('object');
    const run = JSON.stringify(doc.paths[Object.keys(doc.paths).find((k) => k.endsWith('/eval_runs/{id}'))!]);
    for (const field of ['caller_url', 'agent_url', 'duration_ms', 'truncated', 'audio_error']) expect(run).to.contain(field);
  });
});
