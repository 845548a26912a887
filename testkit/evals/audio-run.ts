/**
 * An ended eval run of `calls` answered calls whose two audio tracks are in `store`, written as the
 * worker writes them (a claimed run, storeCallAudio, the run ended by its worker): for the tests of
 * serving, deleting and retaining eval call audio.
 */
import type { Knex } from '../../core/db/knex';
import type { ObjectStore } from '../../core/storage/local';
import { evalRunsRepo, type EvalRunRow } from '../../core/repos/eval-runs';
import { CallAudio, storeCallAudio } from '../../evals/call-audio';
import { newId } from '../../core/ids';
import { claimRun } from './claimed';
import { evalAudioKeysOf } from '../../core/evals/audio';

export async function runWithAudio(db: Knex, store: ObjectStore, customerId: string, opts: { calls?: number; end?: boolean } = {}): Promise<EvalRunRow> {
  const runs = evalRunsRepo(db);
  const scenario = { id: newId(), name: 'short', target: { type: 'number' as const, target: '+899560000009' }, caller: { language: 'en-US', turns: [{ hangup: true as const }] }, checks: [] };
  const run = await runs.create(customerId, { scenarios: [scenario], calls: opts.calls ?? 1, concurrency: 1 });
  const worker = `audio-run-${run.id}`;
  await claimRun(db, run.id, worker);
  const results = [];
  for (let i = 0; i < (opts.calls ?? 1); i++) {
    const a = new CallAudio(60_000);
    for (let k = 0; k < 50; k++) a.onSent({ due: k * 20, pcm: new Int16Array(160).fill(k < 25 ? 3000 : 0) }, 0);
    for (let k = 0; k < 50; k++) a.onHeard({ at: 5 + k * 20, pcm: new Int16Array(160).fill(k >= 25 ? -2000 : 0), ts: k * 160, ssrc: 9 }, 0);
    const sipCallId = `x${newId()}@openvoice-evals`;
    const audio = await storeCallAudio(store, { customerId, runId: run.id, sipCallId }, a.finish(1000));
    results.push({ scenario_id: scenario.id, call_id: newId(), sip_call_id: sipCallId, ended_by: 'caller' as const, transcript: [], audio, turns: [], checks: [], passed: true });
  }
  if (opts.end === false) await runs.saveResults(run.id, worker, results);
  else await runs.end(run.id, worker, 'finished', results);
  return (await runs.get(customerId, run.id))!;
}

/** For each audio key of `run` (evalAudioKeysOf), whether `store` has it. */
export async function audioPresent(store: ObjectStore, run: EvalRunRow): Promise<boolean[]> {
  return Promise.all(evalAudioKeysOf(run).map(async (k) => (await store.get(k).then((o) => (o?.stream.destroy(), !!o))) as boolean));
}
