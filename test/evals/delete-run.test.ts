// DELETE /eval_runs/{id} (docs/evals.md "Both tracks of a call"): an ended run is deleted softly (no longer
// listed nor read) and its calls' audio objects leave the object store at once; a running run is refused
// (409 STATE_INVALID) and keeps everything; another customer's run is a 404. A store that refuses the
// deletes (S3 down) leaves the keys queued with their error, and control-api's sweep deletes them once the
// store answers again; an account's deletion queues its runs' audio likewise.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import pino from 'pino';
import { useTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { audioPresent, runWithAudio } from '../../testkit/evals/audio-run';
import { evalAudioKeysOf } from '../../core/evals/audio';
import { evalAudioRepo } from '../../core/repos/eval-audio';
import { configureStorage, storageBackend } from '../../core/storage/backend';
import { EvalAudioSweep } from '../../core/evals/audio-removal';
import { deleteCustomerAccount } from '../../control-api/jobs/account-deletion';
import { startS3Server, type S3TestServer } from '../support/s3-server';
import type { EvalRunRow } from '../../core/repos/eval-runs';
import { bufferBody } from '../../testkit/buffer-body';

describe('eval runs API: deleting a run removes its calls audio', function () {
  this.timeout(20_000);
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s));
  const auth = (r: request.Test, fx = f) => r.set('Authorization', `Bearer ${fx.token}`);
  const files = () => storageBackend(t.ctx.config).files;
  const present = (run: EvalRunRow) => audioPresent(files(), run);
  const logger = pino({ level: 'silent' });

  it('an ended run: 200 with the run (tm_delete set), its audio gone from the store, no longer listed nor read', async () => {
    const run = await runWithAudio(t.ctx.db, files(), f.customer.id, { calls: 2 });
    expect(evalAudioKeysOf(run)).to.have.length(4);
    expect(await present(run)).to.deep.equal([true, true, true, true]);
    const other = await createFixture(t.ctx);
    const theirs = await auth(request(t.app).delete(`/v1.0/eval_runs/${run.id}`), other).expect(404);
    expect(theirs.body.error).to.include({ reason: 'RESOURCE_NOT_FOUND' });
    expect(await present(run)).to.deep.equal([true, true, true, true]);

    const r = await auth(request(t.app).delete(`/v1.0/eval_runs/${run.id}`)).expect(200);
    expect(r.body).to.include({ id: run.id, status: 'finished' });
    expect(r.body.tm_delete).to.not.equal('9999-01-01 00:00:00.000000');
    expect(await present(run)).to.deep.equal([false, false, false, false]);
    expect(await t.ctx.db('eval_audio_deletions').where({ run_id: run.id })).to.deep.equal([]);
    await auth(request(t.app).get(`/v1.0/eval_runs/${run.id}`)).expect(404);
    const list = await auth(request(t.app).get('/v1.0/eval_runs?page_size=100')).expect(200);
    expect((list.body.result as { id: string }[]).map((x) => x.id)).to.not.include(run.id);
    const track = await auth(request(t.app).get(run.results[0]!.audio!.caller_url)).expect(404);
    expect(track.body.error).to.include({ reason: 'RESOURCE_NOT_FOUND' });
    await auth(request(t.app).delete(`/v1.0/eval_runs/${run.id}`)).expect(404);
  });

  it('a running run is refused with 409 STATE_INVALID and keeps its audio', async () => {
    const run = await runWithAudio(t.ctx.db, files(), f.customer.id, { end: false });
    const r = await auth(request(t.app).delete(`/v1.0/eval_runs/${run.id}`)).expect(409);
    expect(r.body.error).to.include({ status: 'FAILED_PRECONDITION', reason: 'STATE_INVALID' });
    expect(await present(run)).to.deep.equal([true, true]);
    await auth(request(t.app).get(`/v1.0/eval_runs/${run.id}`)).expect(200);
    await t.ctx.db('eval_runs').where({ id: run.id }).update({ status: 'failed', error: 'parked by delete-run.test' });
  });

  it('the queue hands out the fewest attempts first: keys the store keeps refusing never hold back newer ones', async () => {
    const run = randomUUID();
    const row = (key: string, attempts: number, at: string) => ({ id: randomUUID(), key, run_id: run, reason: 'test', attempts, last_error: attempts ? 'refused' : '', tm_create: new Date(at) });
    await t.ctx.db('eval_audio_deletions').insert([row('old-refused-1', 7, '2026-01-01T00:00:00Z'), row('old-refused-2', 3, '2026-01-02T00:00:00Z'), row('new', 0, '2026-02-01T00:00:00Z')]);
    try {
      const first = await evalAudioRepo(t.ctx.db).pending(2, run);
      expect(first.map((d) => d.key)).to.deep.equal(['new', 'old-refused-2']);
    } finally {
      await t.ctx.db('eval_audio_deletions').where({ run_id: run }).delete();
    }
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await request(t.app).get('/v1.0/openapi.json').expect(200)).body as { paths: Record<string, Record<string, { responses: Record<string, object> }>> };
    const key = Object.keys(doc.paths).find((k) => k.endsWith('/eval_runs/{id}'))!;
    expect(doc.paths[key]!.delete, 'DELETE /eval_runs/{id}').to.be.an('object');
    expect(doc.paths[key]!.delete!.responses).to.include.keys('200', '404', '409');
  });

  describe('with the object store refusing (S3 down)', () => {
    let s3: S3TestServer;
    before(async () => {
      s3 = await startS3Server();
      configureStorage(t.ctx.config, s3.settings());
    });
    after(async () => {
      configureStorage(t.ctx.config, null);
      await s3.close();
    });
    const inBucket = (run: EvalRunRow) => evalAudioKeysOf(run).filter((k) => [...s3.objects.keys()].some((o) => o.endsWith(k)));
    const sweep = () => new EvalAudioSweep({ db: t.ctx.db, store: files(), logger, retentionDays: 0, everyMs: 60_000 });

    it('a track in the bucket answers a Range request with just those bytes', async () => {
      const run = await runWithAudio(t.ctx.db, files(), f.customer.id);
      const url = run.results[0]!.audio!.agent_url;
      const whole = (await auth(request(t.app).get(url)).buffer(true).parse(bufferBody).expect(200)).body as Buffer;
      const part = await auth(request(t.app).get(url)).set('Range', 'bytes=1000-1999').buffer(true).parse(bufferBody).expect(206);
      expect(part.headers['content-range']).to.equal(`bytes 1000-1999/${whole.length}`);
      expect(Buffer.compare(part.body as Buffer, whole.subarray(1000, 2000))).to.equal(0);
    });

    it('the deletes it refused stay queued with their error; the sweep deletes them once it answers', async () => {
      const run = await runWithAudio(t.ctx.db, files(), f.customer.id);
      expect(inBucket(run)).to.have.length(2);
      await s3.pause();
      await auth(request(t.app).delete(`/v1.0/eval_runs/${run.id}`)).expect(200);
      const queued = await t.ctx.db('eval_audio_deletions').where({ run_id: run.id }).orderBy('key');
      expect(queued.map((q) => q.key)).to.deep.equal(evalAudioKeysOf(run).sort());
      for (const q of queued) expect(q).to.include({ attempts: 1, reason: 'run deleted' });
      for (const q of queued) expect(q.last_error).to.match(/unreachable|refused|ECONNREFUSED/i);
      // a pass while the store is still down: kept, counted again
      expect(await sweep().runOnce()).to.deep.include({ removed: 0, failed: 2 });
      expect((await t.ctx.db('eval_audio_deletions').where({ run_id: run.id })).map((q) => q.attempts)).to.deep.equal([2, 2]);
      await s3.resume();
      expect(inBucket(run)).to.have.length(2);
      expect(await sweep().runOnce()).to.deep.include({ removed: 2, failed: 0 });
      expect(inBucket(run)).to.deep.equal([]);
      expect(await t.ctx.db('eval_audio_deletions').where({ run_id: run.id })).to.deep.equal([]);
    });

    it("an account's deletion queues its runs' audio; the sweep deletes it", async () => {
      const gone = await createFixture(t.ctx);
      const runs = [await runWithAudio(t.ctx.db, files(), gone.customer.id), await runWithAudio(t.ctx.db, files(), gone.customer.id, { calls: 2 })];
      const mine = await runWithAudio(t.ctx.db, files(), f.customer.id);
      expect(runs.flatMap(inBucket)).to.have.length(6);
      expect(await deleteCustomerAccount(t.ctx.db, gone.customer.id)).to.equal(true);
      expect(await t.ctx.db('eval_runs').where({ customer_id: gone.customer.id })).to.deep.equal([]);
      expect(await sweep().runOnce()).to.deep.include({ failed: 0 });
      expect(runs.flatMap(inBucket)).to.deep.equal([]);
      expect(inBucket(mine)).to.have.length(2);
    });
  });
});
