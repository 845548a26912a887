// The spacing of a run's call starts (EVALS_CALL_SPACING_MS, evals/start-pacing.ts): a run's calls at
// concurrency reach the platform one every spacing, a ramp, and are still up together; a run stopping
// while a call waits for its slot does not place it.
import { expect } from 'chai';
import { numberWithFlow, evalRunEnded, postEvalRun, postEvalScenario, startEvalWorker, useLiveEvals } from '../../testkit/evals/live';
import { StartPacing } from '../../evals/start-pacing';
import type { EvalCallResult } from '../../core/evals/schema';

const SPACING_MS = 1500;

describe('eval run: call starts spaced by EVALS_CALL_SPACING_MS', function () {
  this.timeout(120_000);
  const api = useLiveEvals('evals-pacing-');

  it('3 calls at concurrency 3 reach the platform one every spacing, and are up together', async () => {
    const number = '+899570000301';
    await numberWithFlow(api, number, [{ type: 'answer' }, { type: 'sleep', option: { duration: 5000 } }, { type: 'hangup' }]);
    const scenarioId = await postEvalScenario(api, { name: 'ramp', target: { type: 'number', target: number }, caller: { turns: [{ wait_ms: 8000 }, { hangup: true }] }, checks: [] });
    const runId = await postEvalRun(api, { scenario_ids: [scenarioId], calls: 3, concurrency: 3 });
    api.worker ??= startEvalWorker(api, api.p, { config: { EVALS_CALL_SPACING_MS: String(SPACING_MS), EVALS_SETTLE_MS: '2000' } });
    const run = await evalRunEnded<{ status: string; error: string; results: EvalCallResult[] }>(api, runId);
    expect(run.status, run.error).to.equal('finished');
    const calls = await api.t.ctx
      .db('calls')
      .whereIn(
        'id',
        run.results.map((r) => r.call_id),
      )
      .orderBy('tm_create');
    expect(calls).to.have.length(3);
    const starts = calls.map((c: { tm_create: Date }) => c.tm_create.getTime());
    // each INVITE reached the platform at least the spacing after the one before (less a SIP round's jitter)
    expect(starts[1]! - starts[0]!, 'the second call after the first').to.be.at.least(SPACING_MS - 200);
    expect(starts[2]! - starts[1]!, 'the third call after the second').to.be.at.least(SPACING_MS - 200);
    // concurrency kept: the last call was answered before the first hung up
    const last = calls[2] as { tm_progressing: Date };
    expect(last.tm_progressing.getTime(), 'all three up together').to.be.below((calls[0] as { tm_hangup: Date }).tm_hangup.getTime());
  });

  it('a run stopping while a call waits for its slot: the wait ends with the stop, its timer cleared', async () => {
    const pacing = new StartPacing(60_000);
    const stop = new AbortController();
    await pacing.slot(stop.signal); // the first call: at once
    const waiting = pacing.slot(stop.signal);
    stop.abort(new Error('the worker is closing'));
    const why = await waiting.then(
      () => null,
      (e: unknown) => e,
    );
    expect(why).to.be.an('error').with.property('message', 'the worker is closing');
    await pacing.slot(stop.signal).then(
      () => expect.fail('a stopped run places no call'),
      (e: unknown) => expect(e).to.have.property('message', 'the worker is closing'),
    );
  });
});
