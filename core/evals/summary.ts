/**
 * What a run's results add up to (issue 56, docs/evals.md "Per run"): the pass rate, each check's pass
 * count, and the latency percentiles of every stage over all the run's agent turns; per version when a
 * run runs AI versions side by side; and a comparison of two summaries (two versions, or a run and its
 * baseline) naming the checks and the latencies that moved. Pure functions over the stored results, so
 * the API computes them when a run is read and they are never out of step with the results.
 */
import type { EvalCallResult } from './schema';
import type { CheckMove, CheckTally, Comparison, LatencyMove, RunSummary, StageLatency } from './run-shape';

/** The summary's types are declared with the run's JSON (./run-shape.ts, shared with the console). */
export type { CheckMove, CheckTally, Comparison, LatencyMove, RunSummary, StageLatency };

/** A latency stage moved when its p50 or p95 changed by at least this share of the earlier value... */
export const LATENCY_MOVE_SHARE = 0.1;
/** ...and at least this many ms (a few ms of jitter on a fast stage is not a move). */
export const LATENCY_MOVE_MS = 50;
/**
 * A p95 is compared only over this many turns on each side: of fewer, the nearest-rank p95 is their largest
 * (one slow turn), and two runs of the same agent read "slower" by jitter alone (found by the two-version
 * test of issue 56: 2 turns a side, end_of_turn_wait_ms p95 599 → 663 ms on the same speech path).
 */
export const LATENCY_P95_MIN_TURNS = 20;

/** The nearest-rank percentile `p` (0-100) of ascending `sorted` (not empty). */
export function percentile(sorted: number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

/** Each stage's percentiles: every numeric `…_ms` field of the turns (latency_ms and the stages ai_talk records). */
export function latencyOf(results: EvalCallResult[]): Record<string, StageLatency> {
  const stages = new Map<string, number[]>();
  for (const turn of results.flatMap((r) => r.turns)) {
    for (const [k, v] of Object.entries(turn)) {
      if (!k.endsWith('_ms') || typeof v !== 'number' || !Number.isFinite(v)) continue;
      const list = stages.get(k) ?? [];
      list.push(v);
      stages.set(k, list);
    }
  }
  const out: Record<string, StageLatency> = {};
  for (const [k, list] of [...stages].sort(([a], [b]) => a.localeCompare(b))) {
    list.sort((a, b) => a - b);
    out[k] = { n: list.length, p50: percentile(list, 50), p95: percentile(list, 95), p99: percentile(list, 99) };
  }
  return out;
}

export function summarize(results: EvalCallResult[]): RunSummary {
  const tallies = new Map<string, CheckTally>();
  for (const r of results) {
    r.checks.forEach((c, index) => {
      const key = `${r.scenario_id}#${index}`;
      const t = tallies.get(key) ?? { scenario_id: r.scenario_id, index, type: c.type, passed: 0, of: 0 };
      t.of++;
      if (c.passed) t.passed++;
      tallies.set(key, t);
    });
  }
  const passed = results.filter((r) => r.passed).length;
  return { calls: results.length, passed, pass_rate: results.length ? passed / results.length : null, checks: [...tallies.values()], latency: latencyOf(results) };
}

const rate = (t: { passed: number; of: number }) => t.passed / t.of;

function latencyMove(stage: string, a: StageLatency, b: StageLatency): LatencyMove | null {
  const moved = (x: number, y: number) => Math.abs(y - x) >= Math.max(LATENCY_MOVE_MS, LATENCY_MOVE_SHARE * x);
  const tails = a.n >= LATENCY_P95_MIN_TURNS && b.n >= LATENCY_P95_MIN_TURNS;
  if (!moved(a.p50, b.p50) && !(tails && moved(a.p95, b.p95))) return null;
  // the larger relative move decides the direction (the p95's only when it is compared)
  const d50 = (b.p50 - a.p50) / Math.max(a.p50, 1);
  const d95 = tails ? (b.p95 - a.p95) / Math.max(a.p95, 1) : 0;
  const d = Math.abs(d50) >= Math.abs(d95) ? d50 : d95;
  return { stage, from: { p50: a.p50, p95: a.p95 }, to: { p50: b.p50, p95: b.p95 }, moved: d > 0 ? 'slower' : 'faster' };
}

/** What moved from `from` to `to`: checks by scenario and place, latencies by stage. */
export function compareSummaries(from: RunSummary, to: RunSummary): Comparison {
  const checks: CheckMove[] = [];
  for (const b of to.checks) {
    const a = from.checks.find((x) => x.scenario_id === b.scenario_id && x.index === b.index);
    if (!a || rate(a) === rate(b)) continue;
    checks.push({ scenario_id: b.scenario_id, index: b.index, type: b.type, from: { passed: a.passed, of: a.of }, to: { passed: b.passed, of: b.of }, moved: rate(b) > rate(a) ? 'better' : 'worse' });
  }
  const latency: LatencyMove[] = [];
  for (const [stage, b] of Object.entries(to.latency)) {
    const a = from.latency[stage];
    const m = a && latencyMove(stage, a, b);
    if (m) latency.push(m);
  }
  return { pass_rate: { from: from.pass_rate, to: to.pass_rate }, checks, latency };
}
