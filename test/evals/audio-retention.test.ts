// Eval call audio is kept EVALS_AUDIO_RETENTION_DAYS after its run ended (docs/evals.md "Both tracks of a
// call"): control-api's sweep, on its own timer, removes the tracks of a run past it from the object store and
// says so in the run's results (audio_error), and leaves a younger run's. Time is core/clock, frozen and moved
// past the retention: nothing waits a day; the passes are awaited as they report, never by sleeping.
import { expect } from 'chai';
import request from 'supertest';
import pino from 'pino';
import { useTestApp, type TestApp, type Fixture } from '../../testkit/api';
import { audioPresent, runWithAudio } from '../../testkit/evals/audio-run';
import { storageBackend } from '../../core/storage/backend';
import { EvalAudioSweep, type SweepResult } from '../../core/evals/audio-removal';
import { evalRunsRepo, type EvalRunRow } from '../../core/repos/eval-runs';
import { clock } from '../../core/clock';

const HOUR = 3_600_000;

describe('evals: call audio past its retention is removed by the sweep', function () {
  this.timeout(20_000);
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s));
  const files = () => storageBackend(t.ctx.config).files;
  const present = (run: EvalRunRow) => audioPresent(files(), run);
  let sweep: EvalAudioSweep | null = null;

  afterEach(async () => {
    await sweep?.close();
    sweep = null;
    clock.reset();
  });

  it('a run ended more than EVALS_AUDIO_RETENTION_DAYS ago loses its tracks at the next pass; a younger one keeps them', async () => {
    clock.setNow(Date.now());
    const old = await runWithAudio(t.ctx.db, files(), f.customer.id, { calls: 2 });
    clock.advance(12 * HOUR);
    const young = await runWithAudio(t.ctx.db, files(), f.customer.id);
    // each pass reports; a test waits for the first pass that satisfies it
    const passes: SweepResult[] = [];
    const waiters: { test: (r: SweepResult) => boolean; resolve: (r: SweepResult) => void }[] = [];
    const pass = (test: (r: SweepResult) => boolean) => new Promise<SweepResult>((resolve) => waiters.push({ test, resolve }));
    sweep = new EvalAudioSweep({
      db: t.ctx.db,
      store: files(),
      logger: pino({ level: 'silent' }),
      retentionDays: 1,
      everyMs: 20,
      onPass: (r) => {
        passes.push(r);
        for (const w of waiters.splice(0)) (w.test(r) ? w.resolve : () => waiters.push(w))(r);
      },
    });
    const first = pass(() => true);
    sweep.start();
    // 12 h after the old run ended: nothing of it is past a day
    expect((await first).expired).to.not.include(old.id);
    expect(await present(old)).to.deep.equal([true, true, true, true]);

    clock.advance(12 * HOUR + 1);
    const r = await pass((p) => p.expired.includes(old.id));
    expect(r.expired).to.not.include(young.id);
    expect(await present(old)).to.deep.equal([false, false, false, false]);
    expect(await present(young)).to.deep.equal([true, true]);
    const after = (await evalRunsRepo(t.ctx.db).get(f.customer.id, old.id))!;
    for (const c of after.results) {
      expect(c).to.not.have.property('audio');
      expect(c.audio_error).to.equal('removed: kept 1 days after the run ended (EVALS_AUDIO_RETENTION_DAYS)');
    }
    expect(after.tm_audio_removed).to.be.an.instanceOf(Date);
    expect(await t.ctx.db('eval_audio_deletions').where({ run_id: old.id })).to.deep.equal([]);
    // over the API: the result says why, and the track's URL is no longer served
    const run = await request(t.app).get(`/v1.0/eval_runs/${old.id}`).set('Authorization', `Bearer ${f.token}`).expect(200);
    expect(run.body.results[0].audio_error).to.match(/^removed: kept 1 days/);
    const track = await request(t.app).get(old.results[0]!.audio!.caller_url).set('Authorization', `Bearer ${f.token}`).expect(404);
    expect(track.body.error).to.include({ reason: 'FILE_NOT_FOUND' });

    clock.advance(12 * HOUR);
    await pass((p) => p.expired.includes(young.id));
    expect(await present(young)).to.deep.equal([false, false]);
    // a run whose audio is gone is not expired again
    const n = passes.length;
    const later = await pass(() => passes.length > n);
    expect(later.expired).to.not.include(old.id);
    expect(later.expired).to.not.include(young.id);
  });

  it('a running run is never expired, however old; 0 days keeps every run', async () => {
    clock.setNow(Date.now());
    const running = await runWithAudio(t.ctx.db, files(), f.customer.id, { end: false });
    const ended = await runWithAudio(t.ctx.db, files(), f.customer.id);
    clock.advance(400 * 24 * HOUR);
    const keepAll = new EvalAudioSweep({ db: t.ctx.db, store: files(), logger: pino({ level: 'silent' }), retentionDays: 0, everyMs: 60_000 });
    expect((await keepAll.runOnce()).expired).to.deep.equal([]);
    expect(await present(ended)).to.deep.equal([true, true]);
    const year = new EvalAudioSweep({ db: t.ctx.db, store: files(), logger: pino({ level: 'silent' }), retentionDays: 365, everyMs: 60_000 });
    // a pass takes at most 100 runs, oldest first: the runs other files left come before these
    const expired: string[] = [];
    for (let r = await year.runOnce(); r.expired.length; r = await year.runOnce()) expired.push(...r.expired);
    expect(expired).to.include(ended.id);
    expect(expired).to.not.include(running.id);
    expect(await present(running)).to.deep.equal([true, true]);
    await t.ctx.db('eval_runs').where({ id: running.id }).update({ status: 'failed', error: 'parked by audio-retention.test' });
  });
});
