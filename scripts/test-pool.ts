/**
 * The pool of a parallel test run (scripts/test-run.ts): the suite is split into more shards than run at
 * once (scripts/test-plan.ts partition), and TEST_JOBS of them run together, longest first, the next one
 * starting as soon as one ends. Small shards keep each mocha process well under CI's 15 minutes while the
 * pool keeps the two cores as busy as the old one-shard-per-job split did.
 *
 * Everything here is pure but `runPool`, which takes the child runner as a function: the plan is the
 * pool's expected schedule (simulatePool, on a clock of expected seconds), and the heavy blocks are
 * placed in it as far apart as it allows (placeHeavy). The real pool starts the shards in the same order
 * as the simulation; their real times drift from the expected ones, so the separation is the plan's, not
 * a lock (as with the fixed places of the split it replaces).
 */
import { MAX_PORT_SLICES } from '../testkit/ports';
import { layout, partition, shardFiles, type Shard, type Unit } from './test-plan';

/**
 * Mocha processes at once by default: three on the CI machine's two cores. The suites wait on real-time
 * audio, phones and timers more than they compute: with three processes the two cores were 30–75 % busy
 * most of the run and the whole suite took 22 minutes, against 34 with two.
 */
export const DEFAULT_JOBS = 3;
/**
 * The expected seconds a shard should stay under, with TEST_JOBS of them running together (the table's
 * seconds are measured so): 9 minutes. CI's shards ran up to a fifth over the table (895 s against
 * 744 expected on 2026-11-26), and issue 53 wants each at most 12 minutes: 540 × 1.2 = 648, with room.
 */
export const SHARD_TARGET_S = 540;
/**
 * The most shards in a pool. A shard's port slice is its pool worker's (portSlot), so the ports do not
 * bound this; it only keeps a typo in TEST_SHARDS from starting a thousand processes.
 */
export const MAX_POOL_SHARDS = 32;
/** CI's limit on one shard's wall time: 15 minutes on two cores; the run flags a shard over it. */
export const CI_SHARD_LIMIT_S = 15 * 60;

/** The order the pool starts shards in: longest first, ties to the lower number. */
export function poolOrder<T extends { index: number; seconds: number }>(shards: readonly T[]): T[] {
  return [...shards].sort((a, b) => b.seconds - a.seconds || a.index - b.index);
}

/** When each shard starts and ends, in expected seconds from the run's start. */
export type Schedule = Map<number, { start: number; end: number }>;

/**
 * The pool's expected schedule: shards in `poolOrder`, at most `jobs` at once, each starting when the
 * earliest running one ends (as `runPool` does when each takes its expected seconds).
 */
export function simulatePool(shards: readonly { index: number; seconds: number }[], jobs: number): Schedule {
  const free = Array.from({ length: Math.max(1, Math.min(jobs, shards.length)) }, () => 0);
  const out: Schedule = new Map();
  for (const s of poolOrder(shards)) {
    let slot = 0;
    for (let i = 1; i < free.length; i++) if (free[i]! < free[slot]!) slot = i;
    const start = free[slot]!;
    free[slot] = start + s.seconds;
    out.set(s.index, { start, end: start + s.seconds });
  }
  return out;
}

/** A shard's heavy block as placeHeavy sees it: where the shard starts, the places the block can go, its length. */
export interface HeavyCandidate {
  index: number;
  start: number;
  /** expected seconds from the shard's start to each place (Layout.boundaries) */
  boundaries: number[];
  hotSeconds: number;
}

/**
 * Where each shard's heavy block goes (index → place in its Layout), as far apart as the plan allows:
 * shards taken by expected start (ties to the lower number), each block at the first place that starts
 * at least `gap` seconds after the block before it has ended, with the largest `gap` for which every block
 * finds a place (a bisection). The expected seconds of a heavy file are an estimate (its share of its
 * directory by size), so the room between blocks is what keeps real ones apart. When even no gap leaves a
 * place for all, a block without one goes at its shard's end (the two then overlap: `overlaps` names them).
 */
export function placeHeavy(list: readonly HeavyCandidate[]): Map<number, number> {
  const sorted = [...list].sort((a, b) => a.start - b.start || a.index - b.index);
  const attempt = (gap: number, clamp: boolean): Map<number, number> | null => {
    const out = new Map<number, number>();
    let free = Number.NEGATIVE_INFINITY;
    for (const c of sorted) {
      let at = c.boundaries.findIndex((b) => c.start + b >= free + gap - 1e-9);
      if (at < 0 && !clamp) return null;
      if (at < 0) at = c.boundaries.length - 1;
      out.set(c.index, at);
      free = Math.max(free, c.start + c.boundaries[at]! + c.hotSeconds);
    }
    return out;
  };
  if (!attempt(0, false)) return attempt(0, true)!;
  let lo = 0;
  let hi = Math.max(1, ...sorted.map((c) => c.start + c.boundaries.at(-1)! + c.hotSeconds));
  while (hi - lo > 0.5) {
    const mid = (lo + hi) / 2;
    if (attempt(mid, false)) lo = mid;
    else hi = mid;
  }
  return attempt(lo, false)!;
}

/** One shard of the plan: its spec files in order, its expected start and end, its heavy block's expected time. */
export interface PlannedShard {
  shard: Shard;
  files: string[];
  start: number;
  end: number;
  heavy: { from: number; to: number } | null;
  /** the real-time lane: run after the pool has ended, alone (planLane) */
  lane?: true;
}

/** The whole plan: the split into `count` shards, their schedule over `jobs` processes, the heavy blocks placed. */
export function planRun(all: Unit[], jobs: number, count: number, heavy: readonly string[], seconds: ReadonlyMap<string, number>): PlannedShard[] {
  const shards = partition(all, count);
  const schedule = simulatePool(shards, jobs);
  const layouts = new Map(shards.map((s) => [s.index, layout(s, heavy, seconds)]));
  const places = placeHeavy(
    shards
      .filter((s) => layouts.get(s.index)!.hot.length > 0)
      .map((s) => ({ index: s.index, start: schedule.get(s.index)!.start, boundaries: layouts.get(s.index)!.boundaries, hotSeconds: layouts.get(s.index)!.hotSeconds })),
  );
  return shards.map((s) => {
    const l = layouts.get(s.index)!;
    const { start, end } = schedule.get(s.index)!;
    const at = places.get(s.index) ?? 0;
    const from = start + l.boundaries[at]!;
    return { shard: s, files: shardFiles(l, at), start, end, heavy: l.hot.length > 0 ? { from, to: from + l.hotSeconds } : null };
  });
}

/**
 * The real-time lane of the plan (the table's "realtime" spec files, `lane`, one unit a file), or null
 * when the run has none: one more shard, numbered after the pool's, expected to start when the pool's
 * last shard ends and to run alone, so that its wall-clock bounds see the load they assume.
 */
export function planLane(pool: readonly PlannedShard[], lane: readonly Unit[]): PlannedShard | null {
  if (lane.length === 0) return null;
  const units = [...lane].sort((a, b) => a.dir.localeCompare(b.dir));
  const seconds = units.reduce((n, u) => n + u.seconds, 0);
  const start = Math.max(0, ...pool.map((p) => p.end));
  const shard: Shard = { index: pool.length + 1, units, seconds };
  return { shard, files: units.flatMap((u) => u.files), start, end: start + seconds, heavy: null, lane: true };
}

/** The pairs of shards whose heavy blocks overlap in the plan, with the seconds they share. */
export function overlaps(plan: readonly PlannedShard[]): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  for (const [i, a] of plan.entries()) {
    for (const b of plan.slice(i + 1)) {
      if (!a.heavy || !b.heavy) continue;
      const shared = Math.min(a.heavy.to, b.heavy.to) - Math.max(a.heavy.from, b.heavy.from);
      if (shared > 1e-9) out.push([a.shard.index, b.shard.index, shared]);
    }
  }
  return out;
}

/**
 * The shard count when TEST_SHARDS is not set: today's split over `jobs` processes (its longest one) cut
 * into rounds of at most SHARD_TARGET_S each, `jobs` shards a round (a multiple of `jobs`, so that the
 * pool's rounds are full). At most MAX_POOL_SHARDS and the number of directories.
 */
export function defaultShardCount(all: Unit[], jobs: number, max = MAX_POOL_SHARDS, target = SHARD_TARGET_S): number {
  if (all.length === 0) return 1;
  const longest = Math.max(...partition(all, jobs).map((s) => s.seconds));
  const rounds = Math.max(1, Math.ceil(longest / target));
  return Math.min(jobs * rounds, max, all.length);
}

const whole = (raw: string | undefined): number | null => (raw === undefined || raw.trim() === '' ? null : /^\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN);

/**
 * TEST_JOBS (default DEFAULT_JOBS; at most MAX_PORT_SLICES, a port slice each) and TEST_SHARDS (default
 * `defaultShardCount`, at most MAX_POOL_SHARDS), checked: the pool's shards. The real-time lane, when
 * there is one, runs after them on the first worker's slot.
 */
export function poolSettings(env: NodeJS.ProcessEnv, all: Unit[]): { jobs: number; count: number; fromTable: boolean } {
  const jobs = whole(env.TEST_JOBS) ?? DEFAULT_JOBS;
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > MAX_PORT_SLICES) throw new Error(`TEST_JOBS must be a whole number from 1 to ${MAX_PORT_SLICES} (a port slice each), got ${env.TEST_JOBS}`);
  const count = whole(env.TEST_SHARDS);
  if (count === null) return { jobs, count: defaultShardCount(all, jobs), fromTable: true };
  if (!Number.isInteger(count) || count < 1 || count > MAX_POOL_SHARDS) throw new Error(`TEST_SHARDS must be a whole number from 1 to ${MAX_POOL_SHARDS}, got ${env.TEST_SHARDS}`);
  return { jobs, count, fromTable: false };
}

/**
 * Runs `items` in their order, at most `jobs` at once, the next one starting when one ends; the results
 * in the items' order. `run` is the child runner (a mocha process in scripts/test-run.ts); it is given
 * the worker's slot (1..jobs), which no other item holds while it runs.
 */
export async function runPool<T, R>(items: readonly T[], jobs: number, run: (item: T, slot: number) => Promise<R>): Promise<R[]> {
  if (!Number.isInteger(jobs) || jobs < 1) throw new Error(`jobs must be a whole number ≥ 1, got ${jobs}`);
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (slot: number): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await run(items[i]!, slot);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, (_, i) => worker(i + 1)));
  return results;
}

/** How one shard ended, as `tally` counts it. */
export interface ShardOutcome {
  index: number;
  /** expected seconds */
  expected: number;
  /** wall seconds */
  seconds: number;
  /** its time limit, seconds */
  limit: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** the run was stopped before the shard's turn */
  notStarted?: boolean;
  /** the real-time lane (named so in its line) */
  lane?: boolean;
  summary: { passed: number; failed: number; skipped: number } | null;
}

/**
 * The sums over the shards and the run's line for each (its wall time, flagged when over
 * CI_SHARD_LIMIT_S), then one line on the limit; a shard that timed out, ended without its summary or
 * never started (the run stopped) counts as one failure, and `bad` says whether any shard failed.
 */
export function tally(outcomes: readonly ShardOutcome[], count: number): { passed: number; failed: number; skipped: number; bad: boolean; lines: string[] } {
  const sum = { passed: 0, failed: 0, skipped: 0, bad: false, lines: [] as string[] };
  const min = CI_SHARD_LIMIT_S / 60;
  for (const r of [...outcomes].sort((a, b) => a.index - b.index)) {
    const exit = r.code ?? r.signal;
    const flag = r.seconds > CI_SHARD_LIMIT_S ? ` ⚠ over ${min} min` : '';
    const name = `shard ${r.index}/${count}${r.lane ? ' (real-time lane)' : ''}`;
    if (r.summary) {
      sum.passed += r.summary.passed;
      sum.failed += r.summary.failed;
      sum.skipped += r.summary.skipped;
      sum.lines.push(`${name}: ${r.seconds} s (about ${r.expected} s expected), ${r.summary.passed} passed, ${r.summary.failed} failed, ${r.summary.skipped} skipped, exit ${exit}${flag}`);
    } else if (r.notStarted) {
      sum.failed += 1;
      sum.lines.push(`${name}: not started, the run was stopped (${r.signal ?? 'signal'}): counted as 1 failed`);
    } else if (r.timedOut) {
      sum.failed += 1;
      sum.lines.push(`${name}: timed out after ${r.seconds} s (limit ${r.limit} s): counted as 1 failed${flag}`);
    } else {
      sum.failed += 1;
      sum.lines.push(`${name}: ended (exit ${exit}) after ${r.seconds} s without a summary: counted as 1 failed${flag}`);
    }
    if (r.code !== 0 || r.timedOut) sum.bad = true;
  }
  const over = outcomes.filter((r) => r.seconds > CI_SHARD_LIMIT_S).sort((a, b) => a.index - b.index);
  sum.lines.push(
    over.length
      ? `⚠ ${over.length} shard${over.length === 1 ? '' : 's'} over CI's ${min} minutes: ${over.map((r) => `${r.index}/${count} (${r.seconds} s)`).join(', ')}`
      : `every shard under CI's ${min} minutes (longest ${Math.max(0, ...outcomes.map((r) => r.seconds))} s)`,
  );
  return sum;
}
