// scripts/test-pool.ts: the shards run TEST_JOBS at a time, longest first; the default shard count from
// the times table; the heavy blocks placed apart in the pool's expected schedule. Pure functions on a
// clock of expected seconds, and the pool itself with a fake child runner on a virtual clock (the real
// processes are in test-run.test.ts).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { fileSeconds, findTestFiles, missingListed, partition, readTimes, splitRealtime, units, type Unit } from '../../scripts/test-plan';
import {
  CI_SHARD_LIMIT_S,
  defaultShardCount,
  MAX_POOL_SHARDS,
  overlaps,
  placeHeavy,
  planLane,
  planRun,
  poolOrder,
  poolSettings,
  runPool,
  SHARD_TARGET_S,
  simulatePool,
  tally,
  type ShardOutcome,
} from '../../scripts/test-pool';
import { MAX_PORT_SLICES } from '../../testkit/ports';

const ROOT = path.resolve(__dirname, '../..');

const unit = (dir: string, seconds: number, files = [`${dir}/a.test.ts`]): Unit => ({ dir, files, seconds, estimated: false });
const flush = () => new Promise<void>((r) => setImmediate(r));

/**
 * runPool over shards taking their `seconds` on a virtual clock: the fake runner records when each
 * starts, and the clock jumps to the earliest end among the running ones once nothing else can happen.
 */
async function virtualPool(shards: { index: number; seconds: number }[], jobs: number) {
  let now = 0;
  let running = 0;
  let most = 0;
  const started = new Map<number, number>();
  const slots = new Set<number>();
  const slotClash: string[] = [];
  const ends: { at: number; index: number; done: () => void }[] = [];
  const pool = runPool(poolOrder(shards), jobs, (s, slot) => {
    started.set(s.index, now);
    most = Math.max(most, ++running);
    if (slots.has(slot) || slot < 1 || slot > jobs) slotClash.push(`shard ${s.index} on slot ${slot}`);
    slots.add(slot);
    return new Promise<number>((resolve) =>
      ends.push({
        at: now + s.seconds,
        index: s.index,
        done: () => {
          running--;
          slots.delete(slot);
          resolve(s.index);
        },
      }),
    );
  });
  for (;;) {
    await flush();
    if (ends.length === 0) break;
    ends.sort((a, b) => a.at - b.at || a.index - b.index);
    const next = ends.shift()!;
    now = next.at;
    next.done();
  }
  return { results: await pool, started, most, end: now, slotClash };
}

describe('scripts/test-pool.ts: the shards through a pool of TEST_JOBS processes', () => {
  describe('the pool', () => {
    it('starts the longest first, at most TEST_JOBS at once, the next as soon as one ends: as the simulation expects', async () => {
      const shards = [
        { index: 1, seconds: 50 },
        { index: 2, seconds: 40 },
        { index: 3, seconds: 30 },
        { index: 4, seconds: 30 },
        { index: 5, seconds: 10 },
        { index: 6, seconds: 5 },
      ];
      expect(poolOrder([shards[4]!, shards[2]!, shards[0]!, shards[3]!]).map((s) => s.index)).to.deep.equal([1, 3, 4, 5]);
      const expected = simulatePool(shards, 2);
      // 1 and 2 at 0; 3 when 2 ends (40), 4 when 1 ends (50), 5 when 3 ends (70), 6 when 4 ends (80)
      expect([...expected.entries()].map(([i, t]) => [i, t.start, t.end])).to.deep.equal([
        [1, 0, 50],
        [2, 0, 40],
        [3, 40, 70],
        [4, 50, 80],
        [5, 70, 80],
        [6, 80, 85],
      ]);
      const { results, started, most, end, slotClash } = await virtualPool(shards, 2);
      expect(most, 'never more than TEST_JOBS at once').to.equal(2);
      expect(slotClash, 'each running shard on a port slot of 1..TEST_JOBS no other running one holds').to.deep.equal([]);
      expect(Object.fromEntries(started)).to.deep.equal(Object.fromEntries([...expected].map(([i, t]) => [i, t.start])));
      expect(end).to.equal(85);
      expect(results, "results in the items' order").to.deep.equal([1, 2, 3, 4, 5, 6]);
      const one = await virtualPool(shards, 1);
      expect(one.most).to.equal(1);
      expect(one.end).to.equal(165);
      const wide = await virtualPool(shards, 9);
      expect(wide.most, 'no more at once than there are shards').to.equal(6);
      expect(wide.end).to.equal(50);
      expect([...one.slotClash, ...wide.slotClash]).to.deep.equal([]);
    });

    it('refuses a pool of no process, and runs an empty list to an empty result', async () => {
      for (const bad of [0, -1, 1.5]) {
        const err = await runPool([1], bad, () => Promise.resolve(1)).then(
          () => null,
          (e: Error) => e,
        );
        expect(err?.message, String(bad)).to.match(/jobs must be a whole number/);
      }
      expect(await runPool([], 3, () => Promise.resolve(1))).to.deep.equal([]);
    });
  });

  describe('the heavy blocks', () => {
    it('go as far apart as the schedule allows, each at a file boundary, in order of their shards’ starts', () => {
      // two shards from 0 to 100, two from 100 to 200 (two at a time); blocks of 10 s; places every 10 s
      const places = Array.from({ length: 10 }, (_, i) => i * 10);
      const c = (index: number, start: number) => ({ index, start, boundaries: places, hotSeconds: 10 });
      const at = placeHeavy([c(3, 100), c(1, 0), c(2, 0), c(4, 100)]);
      const from = (i: number, start: number) => start + places[at.get(i)!]!;
      const blocks = [from(1, 0), from(2, 0), from(3, 100), from(4, 100)];
      expect(blocks[0]).to.equal(0);
      // the widest gap that leaves every block a place is 50 s (a wider one pushes the last past 190 s)
      for (let i = 1; i < blocks.length; i++) expect(blocks[i]! - (blocks[i - 1]! + 10), `gap before block ${i + 1}`).to.equal(50);
      expect(blocks).to.deep.equal([0, 60, 120, 180]);
    });

    it('when no place avoids an overlap, the block goes at its shard’s end and the plan names the pair', () => {
      // two shards of 10 s from 0, each all heavy but for one 1-second file
      const at = placeHeavy([
        { index: 1, start: 0, boundaries: [0, 1], hotSeconds: 9 },
        { index: 2, start: 0, boundaries: [0, 1], hotSeconds: 9 },
      ]);
      expect([...at.entries()]).to.deep.equal([
        [1, 0],
        [2, 1],
      ]);
      const all = [unit('test/a', 10, ['test/a/h.test.ts', 'test/a/x.test.ts']), unit('test/b', 10, ['test/b/h.test.ts', 'test/b/x.test.ts'])];
      const seconds = fileSeconds(all, (f) => (f.endsWith('h.test.ts') ? 9 : 1));
      const plan = planRun(all, 2, 2, ['test/a/h.test.ts', 'test/b/h.test.ts'], seconds);
      expect(plan.map((p) => p.files)).to.deep.equal([
        ['test/a/h.test.ts', 'test/a/x.test.ts'],
        ['test/b/x.test.ts', 'test/b/h.test.ts'],
      ]);
      expect(overlaps(plan)).to.deep.equal([[1, 2, 8]]);
      expect(overlaps(planRun(all, 1, 2, ['test/a/h.test.ts', 'test/b/h.test.ts'], seconds)), 'one at a time: none').to.deep.equal([]);
    });
  });

  describe('the default shard count', () => {
    it('cuts the split over TEST_JOBS into rounds of at most SHARD_TARGET_S: a multiple of TEST_JOBS, else every port slice; at most a shard a directory', () => {
      const many = Array.from({ length: 30 }, (_, i) => unit(`test/d${String(i).padStart(2, '0')}`, 100));
      // 3000 s over 3 processes: 1000 s each, two rounds of 500
      expect(defaultShardCount(many, 3, 9, 750)).to.equal(6);
      expect(defaultShardCount(many, 3, 9, 1000)).to.equal(3);
      expect(defaultShardCount(many, 3, 9, 300)).to.equal(9);
      expect(defaultShardCount(many, 3, 9, 100), 'at most the port slices').to.equal(9);
      expect(defaultShardCount(many, 3, 8, 300), 'nine wanted, eight slices: eight, not six').to.equal(8);
      expect(defaultShardCount(many, 4, 9, 100), 'every slice, not the multiple of 4 below it').to.equal(9);
      expect(defaultShardCount(many, 12, 9, 750), 'more processes than slices').to.equal(9);
      expect(defaultShardCount(many.slice(0, 4), 3, 9, 100), 'at most one shard a directory').to.equal(4);
      expect(defaultShardCount([], 3)).to.equal(1);
    });

    it('TEST_JOBS and TEST_SHARDS: defaults, and refusals of what is not a whole number in range', () => {
      const all = [unit('test/a', 10), unit('test/b', 10)];
      expect(poolSettings({}, all)).to.deep.equal({ jobs: 3, count: 2, fromTable: true });
      expect(poolSettings({ TEST_JOBS: '1', TEST_SHARDS: '' }, all)).to.deep.equal({ jobs: 1, count: 1, fromTable: true });
      expect(poolSettings({ TEST_JOBS: '2', TEST_SHARDS: String(MAX_POOL_SHARDS) }, all)).to.deep.equal({ jobs: 2, count: MAX_POOL_SHARDS, fromTable: false });
      expect(poolSettings({ TEST_JOBS: String(MAX_PORT_SLICES) }, all).jobs, 'a port slice a job').to.equal(MAX_PORT_SLICES);
      for (const bad of ['0', '-1', '1.5', 'two', String(MAX_PORT_SLICES + 1)])
        expect(() => poolSettings({ TEST_JOBS: bad }, all), bad).to.throw(`TEST_JOBS must be a whole number from 1 to ${MAX_PORT_SLICES} (a port slice each), got ${bad}`);
      for (const bad of ['0', '1.5', 'x', String(MAX_POOL_SHARDS + 1)]) expect(() => poolSettings({ TEST_SHARDS: bad }, all), bad).to.throw(/TEST_SHARDS must be a whole number from 1 to/);
    });

    it("on the repository's table: shards under the target, the pool's end within its rounds, no heavy blocks together", () => {
      const table = readTimes(path.join(ROOT, 'test/support/test-times.json'));
      const split = splitRealtime(ROOT, findTestFiles(ROOT, ['test']), table);
      const all = units(ROOT, split.pool, table);
      const { jobs, count } = poolSettings({}, all);
      const seconds = fileSeconds(all, (f) => fs.statSync(path.join(ROOT, f)).size);
      const plan = planRun(all, jobs, count, table.heavy ?? [], seconds);
      const biggest = Math.max(...all.map((u) => u.seconds));
      // under the target, unless one directory alone is more (a directory is never split), and always under the
      // 12 minutes a shard may take (issue 53)
      const bound = Math.min(12 * 60, Math.max(SHARD_TARGET_S, biggest));
      for (const p of plan) expect(p.shard.seconds, `shard ${p.shard.index}`).to.be.at.most(bound);
      const old = Math.max(...partition(all, jobs).map((s) => s.seconds));
      const rounds = Math.ceil(count / jobs);
      expect(Math.max(...plan.map((p) => p.end)), 'the pool ends within its rounds of the target').to.be.at.most(Math.max(old, rounds * bound));
      expect(overlaps(plan)).to.deep.equal([]);
      expect(plan.flatMap((p) => p.files).sort(), 'every spec file in exactly one shard').to.deep.equal(all.flatMap((u) => u.files).sort());
      const lane = planLane(plan, split.lane)!;
      expect(lane.shard.index, 'the lane numbered after the pool').to.equal(count + 1);
      // the lane runs alone after the pool: every second of it is wall time (the evals' simulated callers
      // over SIP, whose recogniser waits on the caller's words, took it from two minutes to three; the
      // speakerphone eval, 20 s more; the floods test and the two-version eval run, a minute more)
      expect(lane.shard.seconds, 'the lane kept short: under four and a half minutes').to.be.at.most(270);
      expect([...plan.flatMap((p) => p.files), ...lane.files].sort(), 'the lane’s files in no pool shard').to.deep.equal(findTestFiles(ROOT, ['test']));
    });
  });

  describe('the real-time lane', () => {
    it("takes the table's realtime files (or those under a directory of it) out of the pool, one unit a file, seconds listed under its path or estimated", () => {
      const table = readTimes(path.join(ROOT, 'test/support/test-times.json'));
      const files = findTestFiles(ROOT, ['test/ai', 'test/core']);
      const split = splitRealtime(ROOT, files, table);
      expect(split.lane).to.deep.equal([
        { dir: 'test/ai/barge-in-interim.test.ts', files: ['test/ai/barge-in-interim.test.ts'], seconds: table.seconds['test/ai/barge-in-interim.test.ts'], estimated: false },
      ]);
      expect(split.pool).to.deep.equal(files.filter((f) => f !== 'test/ai/barge-in-interim.test.ts'));
      const byDir = splitRealtime(ROOT, files, { seconds: table.seconds, realtime: ['test/core'] });
      expect(byDir.lane.map((u) => u.dir)).to.deep.equal(files.filter((f) => f.startsWith('test/core/')));
      expect(byDir.lane.every((u) => u.estimated && u.seconds >= 1)).to.equal(true);
      expect(splitRealtime(ROOT, files, { seconds: {} }).lane, 'no list, no lane').to.deep.equal([]);
      expect(missingListed(ROOT, table), "every entry of the repository's lists exists").to.deep.equal([]);
      expect(missingListed(ROOT, { seconds: {}, realtime: ['test/ai', 'test/ai/gone.test.ts'] })).to.deep.equal([{ list: 'realtime', entries: ['test/ai/gone.test.ts'] }]);
      expect(missingListed(ROOT, { seconds: {}, heavy: ['test/scale', 'test/gone'], realtime: ['test/ai/gone.test.ts'] })).to.deep.equal([
        { list: 'heavy', entries: ['test/gone'] },
        { list: 'realtime', entries: ['test/ai/gone.test.ts'] },
      ]);
    });

    it('runs after the pool has ended, as one more shard numbered after the pool’s, alone', () => {
      const all = [unit('test/a', 50), unit('test/b', 40), unit('test/c', 30)];
      const plan = planRun(all, 2, 3, [], new Map());
      expect(Math.max(...plan.map((p) => p.end))).to.equal(70);
      const lane = planLane(plan, [unit('test/r/z.test.ts', 5, ['test/r/z.test.ts']), unit('test/r/a.test.ts', 7, ['test/r/a.test.ts'])]);
      expect(lane).to.deep.equal({
        shard: { index: 4, units: [unit('test/r/a.test.ts', 7, ['test/r/a.test.ts']), unit('test/r/z.test.ts', 5, ['test/r/z.test.ts'])], seconds: 12 },
        files: ['test/r/a.test.ts', 'test/r/z.test.ts'],
        start: 70,
        end: 82,
        heavy: null,
        lane: true,
      });
      expect(planLane(plan, []), 'no realtime file in the run, no lane').to.equal(null);
      expect(planLane([], [unit('test/r/a.test.ts', 7, ['test/r/a.test.ts'])]))
        .to.include({ start: 0, end: 7 })
        .and.nested.include({ 'shard.index': 1 });
    });

    it('the pool is not bound by the port slices: more shards than slices, the default as the rounds need', () => {
      const many = Array.from({ length: 40 }, (_, i) => unit(`test/d${String(i).padStart(2, '0')}`, 100));
      expect(defaultShardCount(many, 3, MAX_POOL_SHARDS, 300), 'five rounds of three').to.equal(15);
      expect(defaultShardCount(many, 3, MAX_POOL_SHARDS, 100), 'capped').to.equal(MAX_POOL_SHARDS);
      expect(MAX_POOL_SHARDS).to.be.greaterThan(MAX_PORT_SLICES);
      expect(poolSettings({ TEST_SHARDS: String(MAX_PORT_SLICES + 3) }, many).count).to.equal(MAX_PORT_SLICES + 3);
    });
  });

  describe('the closing lines', () => {
    const ok = (index: number, seconds: number): ShardOutcome => ({
      index,
      expected: 600,
      seconds,
      limit: 1800,
      code: 0,
      signal: null,
      timedOut: false,
      summary: { passed: 3, failed: 0, skipped: 1 },
    });

    it("give each shard's wall time, flag one over CI's 15 minutes, and sum the counts", () => {
      const t = tally([ok(2, CI_SHARD_LIMIT_S + 1), ok(1, 700)], 2);
      expect(t).to.include({ passed: 6, failed: 0, skipped: 2, bad: false });
      expect(t.lines).to.deep.equal([
        'shard 1/2: 700 s (about 600 s expected), 3 passed, 0 failed, 1 skipped, exit 0',
        'shard 2/2: 901 s (about 600 s expected), 3 passed, 0 failed, 1 skipped, exit 0 ⚠ over 15 min',
        "⚠ 1 shard over CI's 15 minutes: 2/2 (901 s)",
      ]);
      expect(tally([ok(1, CI_SHARD_LIMIT_S)], 1).lines.at(-1)).to.equal("every shard under CI's 15 minutes (longest 900 s)");
    });

    it('count a shard that timed out, ended without its summary or never started as one failure', () => {
      const t = tally(
        [
          { ...ok(1, 30), code: null, signal: 'SIGTERM', timedOut: true, summary: null },
          { ...ok(2, 20), code: null, signal: 'SIGKILL', summary: null },
          { ...ok(3, 10), code: 1, summary: { passed: 1, failed: 2, skipped: 0 } },
          { ...ok(4, 0), code: null, signal: 'SIGINT', summary: null, notStarted: true },
        ],
        4,
      );
      expect(t).to.include({ passed: 1, failed: 5, skipped: 0, bad: true });
      expect(t.lines).to.deep.equal([
        'shard 1/4: timed out after 30 s (limit 1800 s): counted as 1 failed',
        'shard 2/4: ended (exit SIGKILL) after 20 s without a summary: counted as 1 failed',
        'shard 3/4: 10 s (about 600 s expected), 1 passed, 2 failed, 0 skipped, exit 1',
        'shard 4/4: not started, the run was stopped (SIGINT): counted as 1 failed',
        "every shard under CI's 15 minutes (longest 30 s)",
      ]);
    });

    it('name the real-time lane in its line and count it in the sum', () => {
      const t = tally([ok(1, 30), { ...ok(2, 40), lane: true, summary: { passed: 2, failed: 1, skipped: 0 }, code: 1 }], 2);
      expect(t).to.include({ passed: 5, failed: 1, skipped: 1, bad: true });
      expect(t.lines[1]).to.equal('shard 2/2 (real-time lane): 40 s (about 600 s expected), 2 passed, 1 failed, 0 skipped, exit 1');
    });
  });
});
