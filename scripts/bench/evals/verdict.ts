/**
 * The arithmetic of the evals concurrency benchmark (scripts/bench/evals/run.ts): each turn stage's p50
 * and p90 at the low load and the high load, their ratio, and the verdict against the tolerance (issue
 * 56: the agent's stages at 50 concurrent simulated calls within 10 % of the same at 5).
 *
 * The stages are recorded in whole ms (differences of Date.now(), media-app/ai/turn-latency.ts): a stage
 * of 4.5 ms is recorded as 4 or 5 depending on where its ends fell between two ticks of the clock, and
 * the nearest-rank median of such samples jumps by a whole step (4 → 5 ms: "×1.25") when the samples
 * split a little differently. The percentiles here are read from the samples as grouped data: a sample
 * k stands for the interval [k − 0.5, k + 0.5), and the percentile is interpolated within its value's
 * interval by rank (wholeMsPercentile). The tick's phase against each turn is random, so the recorded
 * values are the true ones dithered by the clock, and their spread between k and k + 1 carries the
 * fraction the rounding dropped. That dither spreads each sample over ±1 ms of the stage: a figure under
 * two steps (2 ms) at the low load is made of its samples' split between 0, 1 and 2 ms, and its ratio
 * says nothing (1.0 → 1.17 ms is "×1.17" on 0.17 ms); it passes while it stays under 2 ms at the high load.
 */

/** Two steps of the record (whole ms): a figure under it at the low load is judged against it, not by ratio. */
export const FLOOR_MS = 2;

export interface Figures {
  n: number;
  p50: number;
  p90: number;
}

export interface StageRow {
  stage: string;
  low: Figures;
  high: Figures;
  /** high / low; null when the low figure is 0 (no ratio) */
  p50Ratio: number | null;
  p90Ratio: number | null;
  pass: boolean;
}

/** high / low, or null when low is 0. */
export function ratio(low: number, high: number): number | null {
  return low === 0 ? null : high / low;
}

/**
 * The `p`th percentile (0-100) of `samples`. Whole-ms samples: as grouped data, each value k spread
 * over [k − 0.5, k + 0.5) (from 0 for k = 0: no stage is negative), the rank p/100 × n placed within
 * its value's interval. Any fractional sample (a platform recording sub-ms figures): linear
 * interpolation between the order statistics. Not empty.
 */
export function wholeMsPercentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  if (!sorted.every(Number.isInteger)) {
    const at = (p / 100) * (n - 1);
    const i = Math.floor(at);
    return sorted[i]! + (sorted[Math.min(i + 1, n - 1)]! - sorted[i]!) * (at - i);
  }
  const rank = (p / 100) * n;
  let below = 0;
  for (let i = 0; i < n;) {
    const k = sorted[i]!;
    let j = i;
    while (j < n && sorted[j] === k) j++;
    const count = j - i;
    if (rank <= below + count || j === n) {
      const from = Math.max(0, k - 0.5);
      return from + ((k + 0.5 - from) * Math.max(0, rank - below)) / count;
    }
    below += count;
    i = j;
  }
  return 0;
}

/**
 * A figure passes within `tolerance` (0.1 = 10 %) of the low load's; under FLOOR_MS at the low load, also
 * while it stays under FLOOR_MS at the high (1.0 → 1.17 ms is the clock's dither, not a slowdown). The floor
 * only adds passes: 1.9 → 2.05 ms (×1.08) is within the tolerance and passes though it crosses 2 ms.
 */
function within(low: number, high: number, tolerance: number): boolean {
  const inTolerance = high <= low * (1 + tolerance) + 1e-9;
  return low < FLOOR_MS ? high < FLOOR_MS || inTolerance : inTolerance;
}

/** A count given on the command line (`--rounds 2`): a positive integer, else an error naming the option. */
export function positiveCount(option: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1) throw new Error(`--${option} must be a positive integer, got ${JSON.stringify(text)}`);
  return n;
}

const figures = (xs: number[]): Figures => (xs.length ? { n: xs.length, p50: wholeMsPercentile(xs, 50), p90: wholeMsPercentile(xs, 90) } : { n: 0, p50: 0, p90: 0 });

/** One row per stage measured at either load (a stage measured at one only fails: nothing to compare). */
export function compareStages(low: Record<string, number[]>, high: Record<string, number[]>, tolerance: number): StageRow[] {
  const stages = [...new Set([...Object.keys(low), ...Object.keys(high)])].sort();
  return stages.map((stage) => {
    const l = figures(low[stage] ?? []);
    const h = figures(high[stage] ?? []);
    const measured = l.n > 0 && h.n > 0;
    return {
      stage,
      low: l,
      high: h,
      p50Ratio: ratio(l.p50, h.p50),
      p90Ratio: ratio(l.p90, h.p90),
      pass: measured && within(l.p50, h.p50, tolerance) && within(l.p90, h.p90, tolerance),
    };
  });
}

/** Every numeric `…_ms` field of the turns (latency_ms and the stages ai_talk records), as samples per stage. */
export function stageSamples(turns: Record<string, unknown>[]): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const turn of turns) {
    for (const [k, v] of Object.entries(turn)) {
      if (k.endsWith('_ms') && typeof v === 'number' && Number.isFinite(v)) (out[k] ??= []).push(v);
    }
  }
  return out;
}

/** PASS when every stage passes (and there is at least one), FAIL otherwise. */
export function verdict(rows: StageRow[]): 'PASS' | 'FAIL' {
  return rows.length > 0 && rows.every((r) => r.pass) ? 'PASS' : 'FAIL';
}

/** The report's lines: a row per stage, then the verdict. */
export function formatRows(rows: StageRow[], lowCalls: number, highCalls: number, tolerance: number): string[] {
  const r = (x: number | null) => (x === null ? '-' : x.toFixed(2));
  const f = (x: Figures) => `p50 ${x.p50.toFixed(1)} p90 ${x.p90.toFixed(1)} (n ${x.n})`;
  const lines = rows.map(
    (row) => `${row.stage.padEnd(24)} @${lowCalls}: ${f(row.low)}  @${highCalls}: ${f(row.high)}  ratio p50 ${r(row.p50Ratio)} p90 ${r(row.p90Ratio)}  ${row.pass ? 'ok' : 'OVER'}`,
  );
  lines.push(
    `${verdict(rows)} (every stage's p50 and p90 at ${highCalls} calls within ${Math.round(tolerance * 100)} % of ${lowCalls}; whole-ms samples read as grouped data, a figure under ${FLOOR_MS} ms at ${lowCalls} judged as staying under it)`,
  );
  return lines;
}
