/**
 * The mocha part of `bash scripts/test.sh` (which runs set-up and the type checks first):
 *
 *   npx tsx scripts/test-run.ts                       every suite, in TEST_SHARDS shards run TEST_JOBS at a time (default 3)
 *   TEST_DIRS="test/core test/events" npx tsx scripts/test-run.ts   the same split over these directories only
 *   npx tsx scripts/test-run.ts 'test/sip-server/**\/*.test.ts'       arguments: one mocha run over them, as before
 *
 * The spec files are grouped by directory and the directories split into shards by expected seconds
 * (scripts/test-plan.ts, table test/support/test-times.json): TEST_SHARDS of them, by default the
 * count that keeps each under 9 minutes of expected time (scripts/test-pool.ts defaultShardCount).
 * Each shard is one mocha process; TEST_JOBS run at once as a pool, longest first, the next starting
 * when one ends (scripts/test-pool.ts). A shard is TEST_SHARD of TEST_SHARDS in its environment: its own
 * database and Redis prefix as every mocha process has, and the slice of the test port ranges of the
 * pool worker that runs it (TEST_PORT_SLOT of TEST_PORT_SLOTS = TEST_JOBS, testkit/ports.ts): no two
 * shards running at once share one, and the number of shards is not bound by the ports. A shard's output is buffered and printed whole when it ends, framed by a header
 * with its wall time; its own closing line reads "[shard i/n] N passed, ...". The last line of all is the
 * sum over the shards, "N passed, N failed, N skipped"; before it, each shard's wall time, flagged when
 * over CI's 15 minutes. The exit status is non-zero when any shard failed or ended without its summary
 * (that counts as one failure).
 * A shard still running after its time limit (TEST_SHARD_TIMEOUT_S seconds, default three times its
 * expected seconds and at least 15 minutes) is ended with its whole process group (the phones and
 * engines its tests started), its output so far printed, and counted as one failure.
 * A shard runs the table's "heavy" spec files (a cluster of nodes, a hundred calls at once) as one block,
 * placed in the pool's expected schedule so that no two shards run theirs at the same time.
 * The table's "realtime" spec files (wall-clock bounds of real-time media that hold only on a machine no
 * other mocha process shares) are taken out of the pool's shards and run once the pool has ended, as
 * one more mocha process alone: the real-time lane, shard n of n (the pool's shards are 1..n-1; it runs
 * on the first worker's port slot), with its own output, summary, time limit and
 * line like any shard, its counts in the sum. An entry of either list ("heavy", "realtime") that names no
 * spec file or directory stops the run before any shard starts.
 * The run names its slowest spec files before its last lines. TEST_TIMES_WRITE=1 merges the measured
 * seconds per directory into the table.
 * Retries: none, but for the quarantine list (test/support/quarantine.json, scripts/quarantine.ts). A test
 * that fails fails the run; the tests of the list, known to fail now and then for a reason each entry
 * gives, are the only ones run once more when they fail (TEST_QUARANTINE_RETRY=1 in each shard's
 * environment: test/support/hooks.ts gives them their retry). The run prints the list, each entry with
 * its reason, at its start, and again before its last lines with what each listed test did in this run
 * (passed, passed on its retry with its first error, failed, not run). An entry whose spec file does not
 * exist stops the run before it starts; one whose test is not in its spec file fails any mocha run that
 * loads that file. TEST_RETRIES=N gives every test N retries (default 0; to tell a stall from a fault, not for CI);
 * a test that passed only on such a retry is listed by name with its first error before the last line.
 * A narrowed run (arguments) never retries, the listed tests included.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeEntry, missingSpecFiles, QUARANTINE_FILE, quarantineKey, readQuarantine, type QuarantineEntry } from './quarantine';
import { findTestFiles, fileSeconds, mergeTimes, missingListed, readTimes, shardLimitSeconds, slowest, splitRealtime, units, type Shard } from './test-plan';
import { overlaps, planLane, planRun, poolOrder, poolSettings, runPool, tally, type PlannedShard } from './test-pool';

const ROOT = path.resolve(__dirname, '..');
const MOCHA = path.join(ROOT, 'node_modules', '.bin', 'mocha');
const REPORTER = 'test/support/reporter.js';
const TIMES = path.join(ROOT, 'test', 'support', 'test-times.json');
/** A line while shards run and print nothing (their output is buffered), so CI sees the run is alive. */
const HEARTBEAT_MS = 120_000;
/** After SIGTERM at the time limit, SIGKILL follows when the shard has not ended by then. */
const KILL_GRACE_MS = 10_000;
/** How many of the slowest spec files the run names at its end (where the minutes went). */
const SLOWEST = 12;

interface Summary {
  passed: number;
  failed: number;
  skipped: number;
  /** seconds per spec file */
  files: Record<string, number>;
  /** tests that failed, then passed on their retry: "full title: first error" */
  retried?: string[];
  /** each failed test (or hook) with its spec file and its error's first line */
  failures?: string[];
  /** what each test of the quarantine list that ran did */
  quarantine?: { file: string; title: string; outcome: string }[];
}

interface ShardResult {
  shard: Shard;
  /** the real-time lane */
  lane?: boolean;
  code: number | null;
  signal: NodeJS.Signals | null;
  seconds: number;
  summary: Summary | null;
  /** the shard was ended at its time limit */
  timedOut: boolean;
  /** the run was stopped (SIGINT, SIGTERM) before the shard's turn: it never started */
  notStarted?: boolean;
}

const RETRIES = /^\d+$/.test(process.env.TEST_RETRIES ?? '') ? process.env.TEST_RETRIES! : '0';

const say = (line: string) => process.stdout.write(`[test] ${line}\n`);

function readSummary(file: string): Summary | null {
  if (!fs.existsSync(file)) return null;
  const s = JSON.parse(fs.readFileSync(file, 'utf8')) as Summary;
  return Number.isInteger(s.passed) && Number.isInteger(s.failed) && Number.isInteger(s.skipped) ? s : null;
}

/** One mocha over the given arguments, output straight through (the narrowed run of `test.sh <globs>`). */
function runNarrowed(args: string[]): void {
  const env = { ...process.env };
  delete env.TEST_SHARD;
  delete env.TEST_SHARDS;
  delete env.TEST_PORT_SLOT;
  delete env.TEST_PORT_SLOTS;
  delete env.TEST_SUMMARY_FILE;
  delete env.TEST_QUARANTINE_RETRY;
  const child = spawn(MOCHA, ['--reporter', REPORTER, ...args], { cwd: ROOT, env, stdio: 'inherit' });
  child.once('error', (err) => say(`mocha did not start (${MOCHA}): ${err.message}`)); // 'close' follows, with a failing code
  forwardSignals([child]);
  child.on('close', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

const children = new Set<ChildProcess>();
/** The signal that stopped the run: the pool starts no shard after it. */
let stoppedBy: NodeJS.Signals | null = null;
function forwardSignals(list: ChildProcess[]): void {
  for (const c of list) children.add(c);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      stoppedBy ??= sig;
      for (const c of children) if (c.exitCode === null) signalGroup(c, sig);
    });
  }
}

/** A shard runs in a process group of its own (spawned detached): the signal reaches what its tests started too. */
function signalGroup(c: ChildProcess, sig: NodeJS.Signals): void {
  try {
    if (c.pid !== undefined) process.kill(-c.pid, sig);
    else c.kill(sig);
  } catch {
    c.kill(sig); // the group is gone already, or it was never one (the narrowed run)
  }
}

function runShard(p: PlannedShard, count: number, dir: string, limitS: number, slot: { index: number; count: number }): Promise<ShardResult> {
  const { shard } = p;
  const summaryFile = path.join(dir, `shard-${shard.index}.json`);
  const started = Date.now();
  const child = spawn(MOCHA, ['--reporter', REPORTER, '--retries', RETRIES, ...p.files], {
    cwd: ROOT,
    env: {
      ...process.env,
      TEST_SHARD: String(shard.index),
      TEST_SHARDS: String(count),
      TEST_PORT_SLOT: String(slot.index),
      TEST_PORT_SLOTS: String(slot.count),
      TEST_SUMMARY_FILE: summaryFile,
      TEST_QUARANTINE_RETRY: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  children.add(child);
  const out: Buffer[] = [];
  // a mocha that cannot start fails its shard with the reason in its output ('close' follows, with a failing code)
  child.once('error', (err) => out.push(Buffer.from(`mocha did not start (${MOCHA}): ${err.message}\n`)));
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => out.push(b));
  let timedOut = false;
  let kill: NodeJS.Timeout | undefined;
  const limit = setTimeout(() => {
    timedOut = true;
    say(`shard ${shard.index}/${count}: still running after its limit of ${limitS} s: ended (TEST_SHARD_TIMEOUT_S)`);
    signalGroup(child, 'SIGTERM');
    kill = setTimeout(() => signalGroup(child, 'SIGKILL'), KILL_GRACE_MS);
  }, limitS * 1000);
  // what its tests started and left behind ends with it, as soon as mocha has exited (not at 'close', which a leftover
  // holding the output pipes would put off): the next shard on this worker takes the same ports
  child.once('exit', () => signalGroup(child, 'SIGKILL'));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(limit);
      clearTimeout(kill);
      children.delete(child);
      const seconds = Math.round((Date.now() - started) / 1000);
      const summary = timedOut ? null : readSummary(summaryFile);
      const head = `shard ${shard.index}/${count}${p.lane ? ' (real-time lane, alone)' : ''}: ${shard.units.map((u) => u.dir).join(' ')}`;
      process.stdout.write(`\n[test] ──── ${head} ──── output (${seconds} s, ${timedOut ? `timed out after ${limitS} s` : `exit ${code ?? signal}`})\n`);
      process.stdout.write(Buffer.concat(out));
      process.stdout.write(`[test] ──── end of shard ${shard.index}/${count} ────\n`);
      resolve({ shard, code, signal, seconds, summary, timedOut, ...(p.lane ? { lane: true } : {}) });
    });
  });
}

/** A spec file's path as the reporter wrote it, relative to the repository and `/`-separated. */
const relative = (file: string) => path.relative(ROOT, path.resolve(ROOT, file)).split(path.sep).join('/');

/** Measured seconds per directory, from the shards' per-file times; per file for the real-time lane's (its own table entries). */
function measuredByDir(results: ShardResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) {
    for (const [file, s] of Object.entries(r.summary?.files ?? {})) {
      const dir = r.lane ? relative(file) : path.posix.dirname(relative(file));
      out[dir] = (out[dir] ?? 0) + s;
    }
  }
  return out;
}

/** The quarantine list, each entry with its reason; with `results`, what each listed test did in this run. */
function sayQuarantine(list: readonly QuarantineEntry[], results?: readonly ShardResult[]): void {
  say(`quarantine (${QUARANTINE_FILE}): ${list.length} test${list.length === 1 ? '' : 's'} run once more when they fail; no other test is${RETRIES === '0' ? '' : ` (TEST_RETRIES=${RETRIES})`}`);
  const outcomes = new Map<string, string[]>();
  for (const q of results?.flatMap((r) => r.summary?.quarantine ?? []) ?? []) outcomes.set(quarantineKey(q), [...(outcomes.get(quarantineKey(q)) ?? []), q.outcome]);
  for (const e of list) {
    const [what, why] = describeEntry(e);
    say(`  ⚠ ${what}`);
    say(`      ${why}`);
    if (results) say(`      this run: ${(outcomes.get(quarantineKey(e)) ?? ['not run']).join(', ')}`);
  }
}

/** The lines before the sum: the slowest spec files, the quarantine list, the retried and the failed tests. */
function sayClosing(results: readonly ShardResult[], quarantine: readonly QuarantineEntry[]): void {
  const perFile: Record<string, number> = {};
  for (const r of results) for (const [file, sec] of Object.entries(r.summary?.files ?? {})) perFile[relative(file)] = sec;
  say(
    `slowest spec files: ${slowest(perFile, SLOWEST)
      .map(([f, sec]) => `${f} ${Math.round(sec)} s`)
      .join(', ')}`,
  );
  sayQuarantine(quarantine, results);
  const retried = results.flatMap((r) => r.summary?.retried ?? []);
  if (retried.length) say(`passed on a retry (${retried.length}; TEST_RETRIES=${RETRIES}, not in the quarantine list):`);
  for (const t of retried) say(`  ↻ ${t}`);
  const failures = results.flatMap((r) => r.summary?.failures ?? []);
  if (failures.length) say(`failed (${failures.length}):`);
  for (const t of failures) say(`  ✗ ${t}`);
}

/** The plan as the run prints it at its start: the pool, each shard's directories and expected times. */
function sayPlan(plan: readonly PlannedShard[], lane: PlannedShard | null, files: number, pool: { jobs: number; count: number; fromTable: boolean }): void {
  const n = plan.length + (lane ? 1 : 0);
  const wall = Math.max(0, ...plan.map((p) => p.end), lane?.end ?? 0);
  const count = pool.fromTable ? `TEST_SHARDS from the times table: ≤ ${Math.round(Math.max(0, ...plan.map((p) => p.shard.seconds)))} s each` : 'TEST_SHARDS';
  const then = lane ? `, then the real-time lane (shard ${n}/${n}) alone` : '';
  say(
    `${files} spec files, ${plan.reduce((k, p) => k + p.shard.units.length, 0)} directories, ${plan.length} shards (${count}), ${Math.min(pool.jobs, plan.length)} at a time (TEST_JOBS=${pool.jobs})${then}, about ${Math.round(wall)} s in all`,
  );
  if (lane) say(`real-time lane, shard ${n}/${n}, about ${lane.shard.seconds} s, expected ${Math.round(lane.start)}–${Math.round(lane.end)} s, after the pool, alone: ${lane.files.join(' ')}`);
  for (const p of plan) {
    const dirs = p.shard.units.map((u) => `${u.dir}${u.estimated ? '*' : ''}`).join(' ');
    const heavy = p.heavy ? `, heavy block ${Math.round(p.heavy.from)}–${Math.round(p.heavy.to)} s` : '';
    say(`shard ${p.shard.index}/${n}, about ${p.shard.seconds} s, expected ${Math.round(p.start)}–${Math.round(p.end)} s${heavy}: ${dirs}`);
  }
  for (const [a, b, sec] of overlaps(plan)) say(`heavy blocks of shard ${a}/${n} and ${b}/${n} overlap by about ${Math.round(sec)} s in the plan: no place in them avoids it`);
  if (plan.some((p) => p.shard.units.some((u) => u.estimated))) say('* not in test/support/test-times.json: estimated from the size of its spec files');
}

/** The shards through the pool, TEST_JOBS at a time, with a heartbeat line while none prints. */
async function runAll(plan: readonly PlannedShard[], lane: PlannedShard | null, jobs: number, limits: ReadonlyMap<number, number>): Promise<ShardResult[]> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'test-run-'));
  const started = Date.now();
  const n = plan.length + (lane ? 1 : 0);
  const waiting = new Set([...plan, ...(lane ? [lane] : [])].map((p) => p.shard.index));
  const running = new Set<number>();
  const names = (set: Set<number>) => [...set].map((i) => `${i}/${n}`).join(', ') || 'none';
  const beat = setInterval(() => {
    say(`running ${Math.round((Date.now() - started) / 60_000)} min: shard ${names(running)} running, ${names(waiting)} waiting`);
  }, HEARTBEAT_MS);
  forwardSignals([]);
  const order = poolOrder(plan.map((p) => ({ index: p.shard.index, seconds: p.shard.seconds, p })));
  // a shard's port slice is its pool worker's (testkit/ports.ts portSlot); the lane runs alone after the pool, on the first
  const one = async (p: PlannedShard, slot: number): Promise<ShardResult> => {
    waiting.delete(p.shard.index);
    if (stoppedBy) return { shard: p.shard, code: null, signal: stoppedBy, seconds: 0, summary: null, timedOut: false, notStarted: true, ...(p.lane ? { lane: true } : {}) };
    running.add(p.shard.index);
    const r = await runShard(p, n, tmp, limits.get(p.shard.index)!, { index: slot, count: jobs });
    running.delete(p.shard.index);
    return r;
  };
  try {
    const results = await runPool(order, jobs, ({ p }, slot) => one(p, slot));
    if (!lane) return results;
    if (!stoppedBy) say(`the pool has ended: the real-time lane (shard ${n}/${n}) runs alone`);
    return [...results, await one(lane, 1)];
  } finally {
    clearInterval(beat);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function runSharded(): Promise<number> {
  const quarantine = readQuarantine(path.join(ROOT, QUARANTINE_FILE));
  const missing = missingSpecFiles(ROOT, quarantine);
  if (missing.length) throw new Error(`${QUARANTINE_FILE}: no such spec file: ${missing.map((e) => e.file).join(', ')} (remove or mend the entry)`);
  const roots = (process.env.TEST_DIRS ?? '').split(/\s+/).filter(Boolean);
  const table = readTimes(TIMES);
  const gone = missingListed(ROOT, table);
  if (gone.length)
    throw new Error(`${path.relative(ROOT, TIMES)}: ${gone.map((g) => `"${g.list}" names no such spec file or directory: ${g.entries.join(', ')}`).join('; ')} (remove or mend the entry)`);
  const files = findTestFiles(ROOT, roots.length > 0 ? roots : ['test']);
  const split = splitRealtime(ROOT, files, table);
  const all = units(ROOT, split.pool, table);
  const pool = poolSettings(process.env, all);
  const seconds = fileSeconds(all, (f) => fs.statSync(path.join(ROOT, f)).size);
  const plan = planRun(all, pool.jobs, pool.count, table.heavy ?? [], seconds);
  const lane = planLane(plan, split.lane);
  const limits = new Map([...plan, ...(lane ? [lane] : [])].map((p) => [p.shard.index, shardLimitSeconds(p.shard.seconds)]));
  sayPlan(plan, lane, files.length, pool);
  sayQuarantine(quarantine);

  const started = Date.now();
  const results = await runAll(plan, lane, pool.jobs, limits);
  if (process.env.TEST_TIMES_WRITE === '1') {
    fs.writeFileSync(TIMES, JSON.stringify(mergeTimes(table, measuredByDir(results)), null, 2) + '\n');
    say(`measured seconds per directory written to ${path.relative(ROOT, TIMES)}`);
  }
  const sum = tally(
    results.map((r) => ({ index: r.shard.index, expected: r.shard.seconds, limit: limits.get(r.shard.index)!, ...r })),
    plan.length + (lane ? 1 : 0),
  );
  for (const line of sum.lines) say(line);
  sayClosing(results, quarantine);
  say(`wall ${Math.round((Date.now() - started) / 1000)} s (about ${Math.round(Math.max(0, ...plan.map((p) => p.end), lane?.end ?? 0))} s expected)`);
  process.stdout.write(`${sum.passed} passed, ${sum.failed} failed, ${sum.skipped} skipped\n`);
  return sum.bad || sum.failed > 0 ? 1 : 0;
}

function main(): void {
  const args = process.argv.slice(2);
  if (args.length > 0) {
    runNarrowed(args);
    return;
  }
  runSharded().then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`[test] ${e instanceof Error ? e.message : String(e)}\n`);
      process.stdout.write('0 passed, 1 failed, 0 skipped\n');
      process.exit(2);
    },
  );
}

main();
