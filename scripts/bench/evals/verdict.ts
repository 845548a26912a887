/**
 * The arithmetic of the evals concurrency benchmark (scripts/bench/evals/run.ts): each turn stage's
 * median and p95 at the low load and the high load, their ratio, and the verdict against the tolerance
 * (issue 56: the agent's stages at 50 concurrent simulated calls within 10 % of the same at 5).
 */
import type { StageLatency } from '../../../core/evals/summary';

export interface StageRow {
  stage: string;
  low: { n: number; p50: number; p95: number };
  high: { n: number; p50: number; p95: number };
  /** high / low; null when the low figure is 0 (no ratio) */
  p50Ratio: number | null;
  p95Ratio: number | null;
  pass: boolean;
}

/** high / low, or null when low is 0 (a 0 ms stage at both loads passes, at high only is not a ratio). */
export function ratio(low: number, high: number): number | null {
  return low === 0 ? null : high / low;
}

/** A stage passes when its median and p95 at the high load are within `tolerance` (0.1 = 10 %) of the low load's. */
function within(low: number, high: number, tolerance: number): boolean {
  if (low === 0) return high === 0;
  return high <= low * (1 + tolerance);
}

/** One row per stage measured at both loads (a stage measured at one only fails: nothing to compare). */
export function compareStages(low: Record<string, StageLatency>, high: Record<string, StageLatency>, tolerance: number): StageRow[] {
  const stages = [...new Set([...Object.keys(low), ...Object.keys(high)])].sort();
  return stages.map((stage) => {
    const l = low[stage] ?? { n: 0, p50: 0, p95: 0, p99: 0 };
    const h = high[stage] ?? { n: 0, p50: 0, p95: 0, p99: 0 };
    const measured = l.n > 0 && h.n > 0;
    return {
      stage,
      low: { n: l.n, p50: l.p50, p95: l.p95 },
      high: { n: h.n, p50: h.p50, p95: h.p95 },
      p50Ratio: ratio(l.p50, h.p50),
      p95Ratio: ratio(l.p95, h.p95),
      pass: measured && within(l.p50, h.p50, tolerance) && within(l.p95, h.p95, tolerance),
    };
  });
}

/** PASS when every stage passes (and there is at least one), FAIL otherwise. */
export function verdict(rows: StageRow[]): 'PASS' | 'FAIL' {
  return rows.length > 0 && rows.every((r) => r.pass) ? 'PASS' : 'FAIL';
}

/** The report's lines: a row per stage, then the verdict. */
export function formatRows(rows: StageRow[], lowCalls: number, highCalls: number, tolerance: number): string[] {
  const r = (x: number | null) => (x === null ? '-' : x.toFixed(2));
  const lines = rows.map(
    (row) =>
      `${row.stage.padEnd(24)} @${lowCalls}: p50 ${row.low.p50} p95 ${row.low.p95} (n ${row.low.n})  @${highCalls}: p50 ${row.high.p50} p95 ${row.high.p95} (n ${row.high.n})  ratio p50 ${r(row.p50Ratio)} p95 ${r(row.p95Ratio)}  ${row.pass ? 'ok' : 'OVER'}`,
  );
  lines.push(`${verdict(rows)} (every stage's p50 and p95 at ${highCalls} calls within ${Math.round(tolerance * 100)} % of ${lowCalls})`);
  return lines;
}
