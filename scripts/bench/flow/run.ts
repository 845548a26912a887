/**
 * Non-media actions per second through the flow runner (real clock, in-memory store, events
 * emitted), against a baseline measured in the same run: a plain loop doing the same number of Map
 * writes and reads. Prints a table; its row goes by hand into docs/benchmarks.md.
 *
 *   npx tsx scripts/bench/flow/run.ts [--actions 100000]
 */
import { parseActions } from '../../../core/flow';
import { ListEmitter, nullEmitter, type ActiveflowEmitter } from '../../../media-app/flow/events';
import { egressPolicyFor } from '../../../core/net';
import { PolicyHttp } from '../../../media-app/kit/http';
import { DEFAULT_LIMITS } from '../../../media-app/flow/limits';
import { ActiveflowManager } from '../../../media-app/flow/manager';
import { realClock } from '../../../media-app/kit/clock';
import { InMemoryActiveflowStore, InMemoryFlowStore } from '../../../media-app/flow/stores';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const TOTAL = arg('actions', 100_000);
const PER_FLOW = 900; // under the 1000 executed-action cap
const uid = (n: number) => `b0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

type Mix = { name: string; actions: unknown[]; executedPerRun: number };

function mixes(): Mix[] {
  const sets = Array.from({ length: PER_FLOW }, (_, i) => ({ type: 'variable_set', option: { key: `k${i % 20}`, value: 'v${k1}' } }));
  const branch: unknown[] = [];
  for (let i = 0; i < PER_FLOW / 2; i++) {
    branch.push({ id: uid(2 * i), type: 'variable_set', option: { key: 'choice', value: String(i % 3) } });
    branch.push({ id: uid(2 * i + 1), type: 'branch', option: { variable: 'choice', target_ids: { '0': uid(2 * i + 2), '1': uid(2 * i + 2) }, default_target_id: uid(2 * i + 2) } });
  }
  branch.push({ id: uid(PER_FLOW), type: 'stop' });
  const loops = PER_FLOW / 2 - 1;
  const gotoLoop = [
    { id: uid(1), type: 'variable_set', option: { key: 'n', value: 'x' } },
    { type: 'goto', option: { target_id: uid(1), loop_count: loops } },
  ];
  return [
    { name: 'variable_set x900', actions: sets, executedPerRun: PER_FLOW },
    { name: 'variable_set+branch', actions: branch, executedPerRun: PER_FLOW + 1 },
    { name: 'variable_set+goto loop', actions: gotoLoop, executedPerRun: 2 * (loops + 1) },
  ];
}

async function runMix(mix: Mix, emitter: ActiveflowEmitter): Promise<{ actionsPerSec: number; executed: number }> {
  const actions = parseActions(mix.actions);
  const m = new ActiveflowManager({
    store: new InMemoryActiveflowStore(),
    emitter,
    flows: new InMemoryFlowStore(),
    clock: realClock,
    http: new PolicyHttp(egressPolicyFor({})),
    limits: { ...DEFAULT_LIMITS, maxLoopCount: 1000 },
  });
  const runs = Math.max(1, Math.round(TOTAL / mix.executedPerRun));
  let executed = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) {
    const s = await m.start({ customer_id: uid(0), reference_type: 'api', actions });
    const rec = await s.done;
    executed += rec.executed_actions.length;
    if (rec.end_reason === 'error' || rec.end_reason === 'limit') throw new Error(`${mix.name}: ${rec.end_reason} ${rec.error}`);
  }
  const sec = Number(process.hrtime.bigint() - t0) / 1e9;
  return { actionsPerSec: executed / sec, executed };
}

/** Same count of "actions" as Map operations: one write and one read each. */
function baseline(n: number): number {
  const map = new Map<string, string>();
  let sink = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    map.set(`k${i % 20}`, 'v' + i);
    sink += map.get(`k${(i + 1) % 20}`)?.length ?? 0;
  }
  const sec = Number(process.hrtime.bigint() - t0) / 1e9;
  if (sink < 0) console.log(sink);
  return n / sec;
}

async function main() {
  // Warm-up (JIT) before measuring.
  for (const mix of mixes()) await runMix(mix, nullEmitter);
  // The baseline loop is fast: run it long and keep the best of five so a busy machine skews it less.
  const base = Math.max(...Array.from({ length: 5 }, () => baseline(TOTAL * 10)));
  const rows: string[][] = [['mix', 'events', 'actions', 'actions/s', 'baseline ops/s', 'baseline / runner']];
  rows.push(['Map set+get loop (baseline)', '-', String(TOTAL * 10), fmt(base), fmt(base), '1']);
  for (const mix of mixes()) {
    for (const [label, emitter] of [
      ['none', nullEmitter],
      ['kept', new ListEmitter()],
    ] as const) {
      const r = await runMix(mix, label === 'kept' ? new ListEmitter() : emitter);
      rows.push([mix.name, label, String(r.executed), fmt(r.actionsPerSec), fmt(base), (base / r.actionsPerSec).toFixed(0)]);
    }
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  '));
  console.log(`node ${process.version}, ${TOTAL} actions per mix, ${PER_FLOW} per activeflow`);
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
