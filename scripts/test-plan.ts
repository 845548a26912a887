/**
 * The plan of a parallel test run (scripts/test-run.ts): the spec files, grouped by the directory they
 * sit in, each directory's expected seconds, and a balanced split of the directories into N shards (one
 * mocha process each; scripts/test-pool.ts runs a few at a time). Pure but for reading the file tree and
 * the times table.
 *
 * Expected seconds come from the checked-in table test/support/test-times.json; a directory the table
 * does not list (new tests) is estimated from the size of its spec files at the table's own rate of
 * seconds per byte. The split is greedy, largest first: each directory goes to the shard with the least
 * expected time so far (ties to the lower number), which is deterministic for a given table.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/** One directory's spec files, run by one process. */
export interface Unit {
  dir: string;
  files: string[];
  seconds: number;
  /** true when the table does not list the directory and `seconds` is the size-based estimate */
  estimated: boolean;
}

/** One shard of the run: one mocha process. */
export interface Shard {
  /** 1-based, as TEST_SHARD */
  index: number;
  units: Unit[];
  seconds: number;
}

/** The times table: expected seconds per test directory (paths relative to the repository, `/`-separated). */
export interface TimesTable {
  note?: string;
  seconds: Record<string, number>;
  /**
   * Spec files or directories (relative, `/`-separated) whose tests load the whole machine: a cluster of
   * nodes, a hundred calls at once, a flood. A shard runs them as one block, placed so that no two shards
   * run theirs at the same time in the expected schedule of the pool (scripts/test-pool.ts placeHeavy).
   */
  heavy?: string[];
  /**
   * Spec files or directories whose assertions are wall-clock bounds of real-time media that hold only
   * on a machine no other mocha process shares: taken out of the pool's shards and run after the pool
   * has ended, alone, as one more shard (the real-time lane, scripts/test-pool.ts planLane). Their
   * expected seconds are `seconds` under each file's own path.
   */
  realtime?: string[];
}

/** Seconds per byte of spec file when the table gives nothing to derive a rate from. */
const FALLBACK_RATE = 0.002;

const toPosix = (p: string) => p.split(path.sep).join('/');

/**
 * The spec files (`*.test.ts`) under each of `roots` (directories or single files, relative to `root`),
 * sorted, relative and `/`-separated. A root that does not exist or holds no spec file is an error.
 */
export function findTestFiles(root: string, roots: string[]): string[] {
  const out = new Set<string>();
  for (const r of roots) {
    const abs = path.resolve(root, r);
    const rel = toPosix(path.relative(root, abs));
    if (rel.startsWith('..') || path.isAbsolute(rel)) throw new Error(`TEST_DIRS: ${r} is outside the repository`);
    if (!fs.existsSync(abs)) throw new Error(`TEST_DIRS: ${r} does not exist`);
    const before = out.size;
    walk(abs, (f) => out.add(toPosix(path.relative(root, f))));
    if (out.size === before) throw new Error(`TEST_DIRS: no *.test.ts under ${r}`);
  }
  return [...out].sort();
}

function walk(abs: string, add: (file: string) => void): void {
  const st = fs.statSync(abs);
  if (st.isFile()) {
    if (abs.endsWith('.test.ts')) add(abs);
    return;
  }
  for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    walk(path.join(abs, e.name), add);
  }
}

/** A spec file or directory of the table's lists: relative, `/`-separated, inside the repository. */
const listedPath = z
  .string()
  .min(1)
  .refine((h) => !h.startsWith('/') && !h.includes('..'), 'must be relative, inside the repository');
const TimesSchema = z.object({
  note: z.string().optional(),
  seconds: z.record(z.string(), z.number().finite().min(0)),
  heavy: z.array(listedPath).optional(),
  realtime: z.array(listedPath).optional(),
});

/** Reads and checks the times table: every value a finite number of seconds ≥ 0, the lists relative spec files or directories. */
export function readTimes(file: string): TimesTable {
  const parsed = TimesSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const [key, ...rest] = issue.path.map(String);
    throw new Error(
      `${file}: "${key ?? 'seconds'}"${rest.length ? ` at ${rest.join('.')}` : ''}: ${issue.message} (want {"seconds": {"<dir>": <seconds ≥ 0>}, "heavy": [<path>], "realtime": [<path>]})`,
    );
  }
  const { note, seconds, heavy, realtime } = parsed.data;
  return { note, seconds, ...(heavy ? { heavy } : {}), ...(realtime ? { realtime } : {}) };
}

/** The entries of the table's "heavy" and "realtime" lists that name no file or directory under `root`, by list. */
export function missingListed(root: string, times: TimesTable): { list: 'heavy' | 'realtime'; entries: string[] }[] {
  return (['heavy', 'realtime'] as const).map((list) => ({ list, entries: (times[list] ?? []).filter((f) => !fs.existsSync(path.join(root, f))) })).filter((m) => m.entries.length > 0);
}

/** The table's seconds per byte of spec file, over the directories it lists that exist under `root`. */
function tableRate(root: string, times: TimesTable): number {
  let knownSeconds = 0;
  let knownBytes = 0;
  for (const [dir, s] of Object.entries(times.seconds)) {
    const abs = path.join(root, dir);
    if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory()) continue;
    const own = fs.readdirSync(abs).filter((n) => n.endsWith('.test.ts'));
    knownSeconds += s;
    knownBytes += own.reduce((n, f) => n + fs.statSync(path.join(abs, f)).size, 0);
  }
  return knownBytes > 0 ? knownSeconds / knownBytes : FALLBACK_RATE;
}

const sizeOf = (root: string, list: string[]) => list.reduce((n, f) => n + fs.statSync(path.join(root, f)).size, 0);

/** The spec files grouped by directory, each with its expected seconds. */
export function units(root: string, files: string[], times: TimesTable): Unit[] {
  const byDir = new Map<string, string[]>();
  for (const f of files) {
    const dir = path.posix.dirname(f);
    byDir.set(dir, [...(byDir.get(dir) ?? []), f]);
  }
  const rate = tableRate(root, times);
  return [...byDir.entries()].map(([dir, list]) => {
    const listed = times.seconds[dir];
    return listed === undefined ? { dir, files: list, seconds: Math.max(1, Math.round(sizeOf(root, list) * rate)), estimated: true } : { dir, files: list, seconds: listed, estimated: false };
  });
}

/**
 * The spec files split between the pool and the real-time lane (the table's "realtime" list, as
 * `isHeavy` matches): the pool's files, and the lane's as one unit per file (its `dir` the file), its
 * seconds the table's under the file's path or, when unlisted, estimated from its size.
 */
export function splitRealtime(root: string, files: string[], times: TimesTable): { pool: string[]; lane: Unit[] } {
  const list = times.realtime ?? [];
  const rate = tableRate(root, times);
  const lane = files
    .filter((f) => isHeavy(f, list))
    .map((f) => {
      const listed = times.seconds[f];
      return listed === undefined ? { dir: f, files: [f], seconds: Math.max(1, Math.round(sizeOf(root, [f]) * rate)), estimated: true } : { dir: f, files: [f], seconds: listed, estimated: false };
    });
  return { pool: files.filter((f) => !isHeavy(f, list)), lane };
}

/** Greedy largest-first split of the units into `count` shards (fewer when there are fewer units). */
export function partition(all: Unit[], count: number): Shard[] {
  if (!Number.isInteger(count) || count < 1) throw new Error(`a shard count must be a whole number ≥ 1, got ${count}`);
  const n = Math.min(count, all.length);
  const shards: Shard[] = Array.from({ length: n }, (_, i) => ({ index: i + 1, units: [], seconds: 0 }));
  const order = [...all].sort((a, b) => b.seconds - a.seconds || a.dir.localeCompare(b.dir));
  for (const u of order) {
    let target = shards[0]!;
    for (const s of shards) if (s.seconds < target.seconds) target = s;
    target.units.push(u);
    target.seconds += u.seconds;
  }
  for (const s of shards) s.units.sort((a, b) => a.dir.localeCompare(b.dir));
  return shards;
}

/** true when `file` is one of `heavy` (or another of the table's lists) or lies under one of its directories. */
export function isHeavy(file: string, heavy: readonly string[]): boolean {
  return heavy.some((h) => file === h || file.startsWith(h.endsWith('/') ? h : `${h}/`));
}

/** The expected seconds of each spec file: its directory's seconds shared over its files by their size. */
export function fileSeconds(all: readonly Unit[], bytes: (file: string) => number): Map<string, number> {
  const out = new Map<string, number>();
  for (const u of all) {
    const size = u.files.map((f) => Math.max(1, bytes(f)));
    const total = size.reduce((n, b) => n + b, 0);
    u.files.forEach((f, i) => out.set(f, (u.seconds * size[i]!) / total));
  }
  return out;
}

/** A shard's spec files: the heavy ones (`isHeavy`, one block) apart from the rest, each part sorted, with expected seconds. */
export interface Layout {
  rest: string[];
  hot: string[];
  /** expected seconds from the shard's start to each place the block can go: before rest[0], ..., after the last */
  boundaries: number[];
  hotSeconds: number;
}

export function layout(shard: Shard, heavy: readonly string[], seconds: ReadonlyMap<string, number>): Layout {
  const files = shard.units.flatMap((u) => u.files).sort();
  const hot = files.filter((f) => isHeavy(f, heavy));
  const rest = files.filter((f) => !isHeavy(f, heavy));
  const boundaries = [0];
  for (const f of rest) boundaries.push(boundaries.at(-1)! + (seconds.get(f) ?? 0));
  return { rest, hot, boundaries, hotSeconds: hot.reduce((n, f) => n + (seconds.get(f) ?? 0), 0) };
}

/** The order a shard runs its spec files in: the rest sorted, the heavy block before rest[at] (at the end when at = rest.length). */
export function shardFiles(l: Layout, at: number): string[] {
  if (!Number.isInteger(at) || at < 0 || at > l.rest.length) throw new Error(`the heavy block's place must be 0..${l.rest.length}, got ${at}`);
  return [...l.rest.slice(0, at), ...l.hot, ...l.rest.slice(at)];
}

/** The spec files of `measured` (seconds per file), slowest first, at most `n`. */
export function slowest(measured: Record<string, number>, n: number): Array<[string, number]> {
  return Object.entries(measured)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, n);
}

/** The table with `measured` seconds (per directory, per file for the real-time lane's) merged over it, rounded to whole seconds. */
export function mergeTimes(table: TimesTable, measured: Record<string, number>): TimesTable {
  const seconds: Record<string, number> = { ...table.seconds };
  for (const [dir, s] of Object.entries(measured)) seconds[dir] = Math.max(1, Math.round(s));
  const sorted = Object.fromEntries(
    Object.keys(seconds)
      .sort()
      .map((k) => [k, seconds[k]!]),
  );
  return { ...(table.note ? { note: table.note } : {}), seconds: sorted, ...(table.heavy ? { heavy: table.heavy } : {}), ...(table.realtime ? { realtime: table.realtime } : {}) };
}

/** A shard's time limit without TEST_SHARD_TIMEOUT_S: this many times its expected seconds, at least the floor. */
const LIMIT_FACTOR = 3;
const LIMIT_FLOOR_S = 15 * 60;

/** A shard's time limit, seconds: TEST_SHARD_TIMEOUT_S, else LIMIT_FACTOR × its expected seconds (at least LIMIT_FLOOR_S). */
export function shardLimitSeconds(expected: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TEST_SHARD_TIMEOUT_S;
  if (raw === undefined || raw === '') return Math.max(LIMIT_FLOOR_S, Math.ceil(LIMIT_FACTOR * expected));
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`TEST_SHARD_TIMEOUT_S must be a number of seconds > 0, got ${raw}`);
  return n;
}
