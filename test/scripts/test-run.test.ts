// scripts/test-run.ts: the split of the suites over parallel mocha processes (scripts/test-plan.ts), the
// shards' port slots (test-ports.test.ts has the ranges), and the runner itself, run for real on a small
// copy of the repository's test machinery whose spec files pass, fail and skip on purpose.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileSeconds, findTestFiles, isHeavy, layout, mergeTimes, partition, readTimes, shardFiles, shardLimitSeconds, slowest, units, type Unit } from '../../scripts/test-plan';
import { shardSlice } from '../../testkit/ports';

const ROOT = path.resolve(__dirname, '../..');

const unit = (dir: string, seconds: number): Unit => ({ dir, files: [`${dir}/a.test.ts`], seconds, estimated: false });

/** The runner on `cwd`; SIGTERM (which it passes on to its shards) when it is still running after `limitMs`. */
function run(cwd: string, args: string[], env: NodeJS.ProcessEnv, limitMs = 100_000): Promise<{ code: number | null; out: string; killed: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', 'scripts/test-run.ts', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGTERM');
    }, limitMs);
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, killed });
    });
  });
}

describe('scripts/test-run.ts: the suites in shards over parallel mocha processes', function () {
  describe('the plan', () => {
    it('splits directories into shards greedily, largest first, each in exactly one shard', () => {
      const all = [unit('test/a', 50), unit('test/b', 40), unit('test/c', 30), unit('test/d', 20), unit('test/e', 10)];
      const shards = partition(all, 2);
      expect(shards.map((s) => s.seconds)).to.deep.equal([80, 70]);
      expect(shards.map((s) => s.units.map((u) => u.dir))).to.deep.equal([
        ['test/a', 'test/d', 'test/e'],
        ['test/b', 'test/c'],
      ]);
      expect(partition(all, 3).map((s) => s.seconds)).to.deep.equal([50, 50, 50]);
      expect(partition(all.slice(0, 1), 4)).to.have.length(1);
    });

    it('refuses a shard count that is not a whole number ≥ 1', () => {
      for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => partition([unit('test/a', 1)], bad), String(bad)).to.throw(/shard count/);
    });

    it("takes each listed directory from the table and estimates a new one from its size at the table's rate", () => {
      const files = findTestFiles(ROOT, ['test/core', 'test/events']);
      expect(files.every((f) => /^test\/(core|events)\/[^/]+\.test\.ts$/.test(f))).to.equal(true);
      const table = readTimes(path.join(ROOT, 'test/support/test-times.json'));
      const listed = units(ROOT, files, table);
      expect(listed.map((u) => [u.dir, u.estimated])).to.deep.equal([
        ['test/core', false],
        ['test/events', false],
      ]);
      const withoutEvents = { seconds: { ...table.seconds } };
      delete withoutEvents.seconds['test/events'];
      const [, events] = units(ROOT, files, withoutEvents);
      expect(events!.estimated).to.equal(true);
      expect(events!.seconds).to.be.greaterThan(0);
    });

    it('refuses TEST_DIRS entries that do not exist, hold no spec file, or lie outside the repository', () => {
      expect(() => findTestFiles(ROOT, ['test/nope'])).to.throw(/does not exist/);
      expect(() => findTestFiles(ROOT, ['test/support'])).to.throw(/no \*\.test\.ts/);
      expect(() => findTestFiles(ROOT, ['..'])).to.throw(/outside the repository/);
    });

    it("a shard's time limit: TEST_SHARD_TIMEOUT_S, else three times its expected seconds, at least 15 minutes", () => {
      expect(shardLimitSeconds(100, {})).to.equal(900);
      expect(shardLimitSeconds(1000, {})).to.equal(3000);
      expect(shardLimitSeconds(1000, { TEST_SHARD_TIMEOUT_S: '5' })).to.equal(5);
      for (const bad of ['0', '-1', 'soon']) expect(() => shardLimitSeconds(1, { TEST_SHARD_TIMEOUT_S: bad }), bad).to.throw(/TEST_SHARD_TIMEOUT_S/);
    });

    it('merges measured seconds over the table, whole seconds, sorted, keeping its heavy and realtime lists', () => {
      expect(mergeTimes({ note: 'n', seconds: { 'test/b': 5, 'test/a': 3 }, heavy: ['test/b'], realtime: ['test/c/r.test.ts'] }, { 'test/b': 7.4, 'test/c/r.test.ts': 0.2 })).to.deep.equal({
        note: 'n',
        seconds: { 'test/a': 3, 'test/b': 7, 'test/c/r.test.ts': 1 },
        heavy: ['test/b'],
        realtime: ['test/c/r.test.ts'],
      });
    });

    it("keeps a shard's heavy files as one block at a file boundary; each file's seconds are its share of its directory's by size", () => {
      const units: Unit[] = [
        { dir: 'test/scale', files: ['test/scale/b.test.ts', 'test/scale/a.test.ts'], seconds: 30, estimated: false },
        { dir: 'test/core', files: ['test/core/z.test.ts', 'test/core/big.test.ts', 'test/core/a.test.ts', 'test/core/m.test.ts', 'test/core/n.test.ts'], seconds: 60, estimated: false },
      ];
      const bytes: Record<string, number> = {
        'test/scale/a.test.ts': 1,
        'test/scale/b.test.ts': 2,
        'test/core/big.test.ts': 8,
        'test/core/a.test.ts': 1,
        'test/core/m.test.ts': 1,
        'test/core/n.test.ts': 1,
        'test/core/z.test.ts': 1,
      };
      const seconds = fileSeconds(units, (f) => bytes[f]!);
      expect(seconds.get('test/scale/b.test.ts')).to.equal(20);
      expect(seconds.get('test/core/big.test.ts')).to.equal(40);
      expect(seconds.get('test/core/m.test.ts')).to.equal(5);
      const heavy = ['test/scale', 'test/core/big.test.ts'];
      const l = layout({ index: 1, units, seconds: 90 }, heavy, seconds);
      const hot = ['test/core/big.test.ts', 'test/scale/a.test.ts', 'test/scale/b.test.ts'];
      const rest = ['test/core/a.test.ts', 'test/core/m.test.ts', 'test/core/n.test.ts', 'test/core/z.test.ts'];
      expect(l).to.deep.equal({ rest, hot, boundaries: [0, 5, 10, 15, 20], hotSeconds: 70 });
      expect(shardFiles(l, 0)).to.deep.equal([...hot, ...rest]);
      expect(shardFiles(l, 2)).to.deep.equal([...rest.slice(0, 2), ...hot, ...rest.slice(2)]);
      expect(shardFiles(l, 4)).to.deep.equal([...rest, ...hot]);
      for (const bad of [-1, 5, 1.5]) expect(() => shardFiles(l, bad), String(bad)).to.throw(/heavy block/);
      expect(shardFiles(layout({ index: 1, units, seconds: 90 }, [], seconds), 0)).to.deep.equal([...units[1]!.files, ...units[0]!.files].sort());
      expect(isHeavy('test/scalex/a.test.ts', ['test/scale']), 'a directory matches whole path segments only').to.equal(false);
      expect(slowest({ 'test/a.test.ts': 3, 'test/b.test.ts': 9, 'test/c.test.ts': 3 }, 2)).to.deep.equal([
        ['test/b.test.ts', 9],
        ['test/a.test.ts', 3],
      ]);
    });

    it("every heavy entry of the repository's table exists, and a bad heavy list is refused", () => {
      const table = readTimes(path.join(ROOT, 'test/support/test-times.json'));
      expect(table.heavy ?? []).not.to.be.empty;
      for (const h of table.heavy ?? []) expect(fs.existsSync(path.join(ROOT, h)), h).to.equal(true);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'times-'));
      try {
        for (const heavy of ['test/scale', [3], [''], ['/abs'], ['test/../x']]) {
          fs.writeFileSync(path.join(dir, 't.json'), JSON.stringify({ seconds: {}, heavy }));
          expect(() => readTimes(path.join(dir, 't.json')), JSON.stringify(heavy)).to.throw(/"heavy"/);
          fs.writeFileSync(path.join(dir, 't.json'), JSON.stringify({ seconds: {}, realtime: heavy }));
          expect(() => readTimes(path.join(dir, 't.json')), `realtime ${JSON.stringify(heavy)}`).to.throw(/"realtime"/);
        }
        for (const seconds of [{ 'test/a': -1 }, { 'test/a': '3' }, []]) {
          fs.writeFileSync(path.join(dir, 't.json'), JSON.stringify({ seconds }));
          expect(() => readTimes(path.join(dir, 't.json')), JSON.stringify(seconds)).to.throw(/"seconds"/);
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('the runner, on a copy of the test machinery', function () {
    this.timeout(120_000);
    let repo = '';
    const env = (): NodeJS.ProcessEnv => {
      const e = { ...process.env };
      for (const k of ['TEST_SHARD', 'TEST_SHARDS', 'TEST_PORT_SLOT', 'TEST_PORT_SLOTS', 'TEST_SUMMARY_FILE', 'TEST_DIRS', 'TEST_JOBS', 'TEST_TIMES_WRITE', 'TEST_RETRIES', 'TEST_QUARANTINE_RETRY'])
        delete e[k];
      return e;
    };
    /** The copy's quarantine list. */
    const quarantine = (tests: { file: string; title: string; reason: string }[]) =>
      fs.writeFileSync(path.join(repo, 'test/support/quarantine.json'), JSON.stringify({ note: 'the runner test', tests }));
    const spec = (body: string) => `import { shardSlice } from '../../testkit/ports';\nconsole.log('slice', process.env.TEST_SHARD ?? '-', JSON.stringify(shardSlice('free')));\n${body}\n`;

    before(() => {
      repo = fs.mkdtempSync(path.join(os.tmpdir(), 'test-run-'));
      for (const f of [
        '.mocharc.json',
        'scripts/test-run.ts',
        'scripts/test-plan.ts',
        'scripts/test-pool.ts',
        'scripts/quarantine.ts',
        'test/support/reporter.js',
        'test/support/hooks.ts',
        'testkit/ports.ts',
      ]) {
        fs.mkdirSync(path.dirname(path.join(repo, f)), { recursive: true });
        fs.copyFileSync(path.join(ROOT, f), path.join(repo, f));
      }
      fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(repo, 'node_modules'));
      fs.writeFileSync(
        path.join(repo, 'test/support/test-times.json'),
        JSON.stringify({ seconds: { 'test/a': 10, 'test/b': 9, 'test/c': 1, 'test/p1': 30, 'test/p2': 20, 'test/p3': 10 }, heavy: ['test/b', 'test/a/one.test.ts'] }),
      );
      quarantine([]);
      const write = (f: string, body: string) => {
        fs.mkdirSync(path.dirname(path.join(repo, f)), { recursive: true });
        fs.writeFileSync(path.join(repo, f), spec(body));
      };
      write('test/a/one.test.ts', "describe('a', () => { it('passes', () => undefined); it('passes too', () => undefined); it.skip('is skipped', () => undefined); });");
      write('test/b/two.test.ts', "describe('b', () => { it('passes', () => undefined); it('fails on purpose', () => { throw new Error('boom'); }); });");
      write('test/c/three.test.ts', "describe('c', () => { it('passes', () => undefined); });");
    });
    after(() => {
      if (repo) fs.rmSync(repo, { recursive: true, force: true });
    });

    it('two shards: disjoint ports, each output whole and framed, the sum as the last line, exit 1 on a failure', async () => {
      const { code, out } = await run(repo, [], { ...env(), TEST_JOBS: '2' });
      expect(code, out).to.equal(1);
      const lines = out.trimEnd().split('\n');
      expect(lines.at(-1)).to.equal('4 passed, 1 failed, 1 skipped');
      expect(out, 'no test is run twice by default').not.to.include('retry');
      expect(out).to.match(/^\[shard 1\/2\] 2 passed, 0 failed, 1 skipped$/m);
      expect(out).to.match(/^\[shard 2\/2\] 2 passed, 1 failed, 0 skipped$/m);
      expect(
        lines.filter((l) => /^\d+ passed, \d+ failed, \d+ skipped$/.test(l)),
        'one unprefixed closing line',
      ).to.have.length(1);
      // test/a (10 s) alone in shard 1; test/b and test/c (9 + 1 s) in shard 2; both heavy, both from 0 s
      expect(out).to.include('2 shards (TEST_SHARDS from the times table: ≤ 10 s each), 2 at a time (TEST_JOBS=2), about 10 s in all');
      expect(out).to.include('shard 1/2, about 10 s, expected 0–10 s, heavy block 0–10 s: test/a').and.include('shard 2/2, about 10 s, expected 0–10 s, heavy block 1–10 s: test/b test/c');
      expect(out).to.include('heavy blocks of shard 1/2 and 2/2 overlap by about 9 s in the plan: no place in them avoids it');
      expect(out).to.match(/^\[test\] shard 1\/2: \d+ s \(about 10 s expected\), 2 passed, 0 failed, 1 skipped, exit 0$/m);
      expect(out).to.match(/^\[test\] every shard under CI's 15 minutes \(longest \d+ s\)$/m);
      for (const i of [1, 2]) {
        const start = lines.findIndex((l) => l.startsWith(`[test] ──── shard ${i}/2:`));
        const end = lines.indexOf(`[test] ──── end of shard ${i}/2 ────`);
        expect(start, `shard ${i} header`).to.be.greaterThan(-1);
        expect(end, `shard ${i} end`).to.be.greaterThan(start);
        const other = lines.slice(start, end).filter((l) => l.startsWith('[shard ') && !l.startsWith(`[shard ${i}/2]`));
        expect(other, `only shard ${i}'s lines inside its block`).to.deep.equal([]);
      }
      const block2 = lines.slice(lines.findIndex((l) => l.startsWith('[test] ──── shard 2/2:')));
      expect(
        block2.findIndex((l) => l.trim() === 'c'),
        'shard 2 runs its heavy test/b where the plan puts it: after test/c, as late as it can',
      ).to.be.lessThan(block2.findIndex((l) => l.trim() === 'b'));
      expect(out).to.match(/slowest spec files: test\/[abc]\/\w+\.test\.ts \d+ s, /);
      const slices = [...out.matchAll(/^slice (\d) (\{.*\})$/gm)].map((m) => ({ shard: m[1], ...(JSON.parse(m[2]!) as { min: number; max: number }) }));
      const one = slices.find((s) => s.shard === '1')!;
      const two = slices.find((s) => s.shard === '2')!;
      expect(one.max < two.min || two.max < one.min, JSON.stringify(slices)).to.equal(true);
    });

    it('a pool: TEST_SHARDS shards, TEST_JOBS at a time, longest first, the next starting as soon as one ends', async () => {
      // p1 (30 s expected) runs until p3 has started: the pool must start p3 when p2 (20 s) ends, not after
      // p1; p3 (10 s) must not start before p2 has ended (two at a time)
      const marker = path.join(repo, 'p3-started');
      const span = (name: string, body: string) =>
        `describe('${name}', () => { it('runs', async function () { this.timeout(60_000); const t0 = Date.now(); ${body} console.log('span', '${name}', t0, Date.now()); }); });`;
      const files = {
        'test/p1/p.test.ts': span('p1', `const fs = require('node:fs'); while (!fs.existsSync(${JSON.stringify(marker)})) await new Promise((r) => setTimeout(r, 50));`),
        'test/p2/p.test.ts': span('p2', 'await new Promise((r) => setTimeout(r, 1000));'),
        'test/p3/p.test.ts': span('p3', `require('node:fs').writeFileSync(${JSON.stringify(marker)}, '');`),
      };
      for (const [f, body] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(repo, f)), { recursive: true });
        fs.writeFileSync(path.join(repo, f), spec(body));
      }
      try {
        const { code, out, killed } = await run(repo, [], { ...env(), TEST_JOBS: '2', TEST_SHARDS: '3', TEST_DIRS: 'test/p1 test/p2 test/p3' }, 90_000);
        expect(killed, out).to.equal(false);
        expect(code, out).to.equal(0);
        expect(out).to.include('3 shards (TEST_SHARDS), 2 at a time (TEST_JOBS=2), about 30 s in all');
        expect(out).to.include('shard 3/3, about 10 s, expected 20–30 s: test/p3');
        const spans = Object.fromEntries([...out.matchAll(/^span (p\d) (\d+) (\d+)$/gm)].map((m) => [m[1], { from: Number(m[2]), to: Number(m[3]) }]));
        expect(Object.keys(spans).sort(), out).to.deep.equal(['p1', 'p2', 'p3']);
        expect(spans.p3!.from, 'p3 starts after p2 has ended').to.be.at.least(spans.p2!.to);
        // p1 ends only once it has seen p3's marker, written after p3's start: p1 cannot have ended before p3
        // started, and both clocks read the same millisecond when p1's 50 ms poll lands right after the write
        expect(spans.p3!.from, 'p3 starts while p1 runs').to.be.at.most(spans.p1!.to);
        const slice = (shard: string) => [...out.matchAll(/^slice (\d) (\{.*\})$/gm)].filter((m) => m[1] === shard).map((m) => JSON.parse(m[2]!) as { min: number; max: number })[0]!;
        const [s1, s2, s3] = ['1', '2', '3'].map(slice);
        expect(s3, "p3 on the slot p2's end freed: p2's ports").to.deep.equal(s2);
        expect(s1!.max < s3!.min || s3!.max < s1!.min, 'p1 and p3 run together on disjoint ports').to.equal(true);
        for (const i of [1, 2, 3]) expect(out).to.match(new RegExp(`^\\[test\\] shard ${i}/3: \\d+ s \\(about ${40 - i * 10} s expected\\), 1 passed, 0 failed, 0 skipped, exit 0$`, 'm'));
        expect(out.trimEnd().split('\n').at(-1)).to.equal('3 passed, 0 failed, 0 skipped');
        const bad = await run(repo, [], { ...env(), TEST_SHARDS: '33', TEST_DIRS: 'test/p3' });
        expect(bad.code, bad.out).to.equal(2);
        expect(bad.out).to.include('TEST_SHARDS must be a whole number from 1 to 32, got 33');
        expect(bad.out.trimEnd().split('\n').at(-1)).to.equal('0 passed, 1 failed, 0 skipped');
      } finally {
        for (const d of ['test/p1', 'test/p2', 'test/p3']) fs.rmSync(path.join(repo, d), { recursive: true, force: true });
        fs.rmSync(marker, { force: true });
      }
    });

    it("a shard's leftovers (a process its tests started and did not end) end with it: the next shard on its worker takes its ports", async () => {
      const pidFile = path.join(repo, 'leftover.pid');
      fs.mkdirSync(path.join(repo, 'test/z'), { recursive: true });
      fs.writeFileSync(
        path.join(repo, 'test/z/z.test.ts'),
        spec(
          // the leftover holds the shard's output pipes (stdio inherited): the shard's 'close' would wait for it
          `describe('z', () => { it('leaves a process behind', () => { const c = require('node:child_process').spawn('sleep', ['120'], { stdio: 'inherit' }); c.unref(); require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(c.pid)); }); });`,
        ),
      );
      try {
        const started = Date.now();
        const { code, out } = await run(repo, [], { ...env(), TEST_DIRS: 'test/z' });
        expect(code, out).to.equal(0);
        expect(Date.now() - started, 'the run did not wait for the leftover').to.be.below(60_000);
        const pid = Number(fs.readFileSync(pidFile, 'utf8'));
        // running, not a zombie waiting for its reaper (/proc/<pid>/stat's state)
        const alive = () => {
          try {
            return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
          } catch {
            return false;
          }
        };
        for (let i = 0; i < 50 && alive(); i++) await new Promise((r) => setTimeout(r, 20));
        expect(alive(), `sleep ${pid} still running after its shard ended`).to.equal(false);
      } finally {
        fs.rmSync(path.join(repo, 'test/z'), { recursive: true, force: true });
        fs.rmSync(pidFile, { force: true });
      }
    });

    it('TEST_DIRS narrows the split to those directories; all passing exits 0', async () => {
      const { code, out } = await run(repo, [], { ...env(), TEST_JOBS: '2', TEST_DIRS: 'test/a test/c' });
      expect(code, out).to.equal(0);
      expect(out.trimEnd().split('\n').at(-1)).to.equal('3 passed, 0 failed, 1 skipped');
      expect(out).not.to.include('test/b');
    });

    it('a TEST_DIRS that does not exist stops the run with a clear message and a failing last line', async () => {
      const { code, out } = await run(repo, [], { ...env(), TEST_DIRS: 'test/nope' });
      expect(code).to.equal(2);
      expect(out).to.include('TEST_DIRS: test/nope does not exist');
      expect(out.trimEnd().split('\n').at(-1)).to.equal('0 passed, 1 failed, 0 skipped');
    });

    it('a shard that hangs past its limit or dies without its summary fails the run; the others still count', async () => {
      const extra = {
        'test/d/hang.test.ts':
          "describe('d', () => { it('passes', () => undefined); it('hangs', function () { this.timeout(0); setInterval(() => undefined, 1000); return new Promise(() => undefined); }); });",
        'test/e/crash.test.ts': "describe('e', () => { it('dies', () => { process.kill(process.pid, 'SIGKILL'); }); });",
      };
      for (const [f, body] of Object.entries(extra)) {
        fs.mkdirSync(path.dirname(path.join(repo, f)), { recursive: true });
        fs.writeFileSync(path.join(repo, f), spec(body));
      }
      try {
        const started = Date.now();
        const { code, out, killed } = await run(repo, [], { ...env(), TEST_JOBS: '3', TEST_DIRS: 'test/a test/d test/e', TEST_SHARD_TIMEOUT_S: '4' }, 60_000);
        expect(killed, `the runner itself hung:\n${out}`).to.equal(false);
        expect(code, out).to.equal(1);
        expect(Date.now() - started).to.be.below(40_000);
        expect(out).to.match(/shard \d\/3: timed out after \d+ s \(limit 4 s\): counted as 1 failed/);
        expect(out).to.match(/shard \d\/3: ended \(exit SIGKILL\) after \d+ s without a summary: counted as 1 failed/);
        // test/a's 2 passed and 1 skipped; one failure for each of the two broken shards
        expect(out.trimEnd().split('\n').at(-1)).to.equal('2 passed, 2 failed, 1 skipped');
      } finally {
        for (const d of ['test/d', 'test/e']) fs.rmSync(path.join(repo, d), { recursive: true, force: true });
      }
    });

    it('only a quarantined test is run once more; the run prints the list with each reason and outcome; TEST_RETRIES=1 retries all', async () => {
      const f = 'test/f/flaky.test.ts';
      fs.mkdirSync(path.dirname(path.join(repo, f)), { recursive: true });
      const body =
        "let q = 0; let p = 0;\ndescribe('f', () => { it('fails once', () => { if (q++ === 0) throw new Error('a stall'); }); it('plain fails once', () => { if (p++ === 0) throw new Error('plain stall'); }); it('always fails', () => { throw new Error('boom'); }); });";
      fs.writeFileSync(path.join(repo, f), spec(body));
      quarantine([
        { file: f, title: 'f fails once', reason: 'fails on its first attempt only, on purpose: the retry passes' },
        { file: f, title: 'f always fails', reason: 'fails on every attempt, on purpose: the retry fails too' },
      ]);
      try {
        const { code, out } = await run(repo, [], { ...env(), TEST_DIRS: 'test/f' });
        expect(code, out).to.equal(1);
        expect(out.trimEnd().split('\n').at(-1)).to.equal('1 passed, 2 failed, 0 skipped');
        const lines = out.split('\n');
        const heads = lines.flatMap((l, i) => (l.startsWith('[test] quarantine (test/support/quarantine.json): 2 tests run once more when they fail; no other test is') ? [i] : []));
        expect(heads, 'the list printed at the start and before the last lines').to.have.length(2);
        expect(lines[heads[0]! + 1]).to.equal('[test]   ⚠ test/f/flaky.test.ts: f fails once');
        expect(lines[heads[0]! + 2]).to.equal('[test]       why: fails on its first attempt only, on purpose: the retry passes');
        const closing = lines.slice(heads[1]!).join('\n');
        expect(closing)
          .to.include('this run: passed on its retry; its first error: a stall')
          .and.include('⚠ test/f/flaky.test.ts: f always fails\n[test]       why: fails on every attempt, on purpose: the retry fails too\n[test]       this run: failed: boom');
        expect(out).to.include('quarantined: f fails once: passed on its retry; its first error: a stall').and.include('failed on its retry too; its first error: f always fails: boom');
        expect(closing, 'a test not in the list fails at once').to.match(/✗ f plain fails once \(.*flaky\.test\.ts\): plain stall/);
        expect(out).not.to.include('passed on a retry');
        const all = await run(repo, [], { ...env(), TEST_DIRS: 'test/f', TEST_RETRIES: '1' });
        expect(all.out.trimEnd().split('\n').at(-1), all.out).to.equal('2 passed, 1 failed, 0 skipped');
        expect(all.out).to.include('passed on a retry (1; TEST_RETRIES=1, not in the quarantine list):').and.include('↻ f plain fails once: plain stall');
        // a narrowed run retries nothing, the list's tests included
        const narrowed = await run(repo, [f], env());
        expect(narrowed.out.trimEnd().split('\n').at(-1), narrowed.out).to.equal('0 passed, 3 failed, 0 skipped');
      } finally {
        quarantine([]);
        fs.rmSync(path.join(repo, 'test/f'), { recursive: true, force: true });
      }
    });

    it('an entry whose test is gone fails the run that loads its file; one whose spec file is gone stops the run at once', async () => {
      quarantine([{ file: 'test/c/three.test.ts', title: 'c was renamed', reason: 'names a test that is not there, on purpose' }]);
      try {
        const stale = await run(repo, [], { ...env(), TEST_DIRS: 'test/c' });
        expect(stale.code, stale.out).to.equal(1);
        expect(stale.out).to.include('test/support/quarantine.json: no such test: "c was renamed" in test/c/three.test.ts. Renamed or removed?');
        expect(stale.out.trimEnd().split('\n').at(-1)).to.equal('0 passed, 1 failed, 0 skipped');
        // a run that does not load the file does not look for it
        expect((await run(repo, [], { ...env(), TEST_DIRS: 'test/a' })).code).to.equal(0);
        quarantine([{ file: 'test/c/gone.test.ts', title: 'c gone', reason: 'names a spec file that is not there, on purpose' }]);
        const gone = await run(repo, [], { ...env(), TEST_DIRS: 'test/c' });
        expect(gone.code, gone.out).to.equal(2);
        expect(gone.out).to.include('test/support/quarantine.json: no such spec file: test/c/gone.test.ts').and.not.include('──── shard');
        expect(gone.out.trimEnd().split('\n').at(-1)).to.equal('0 passed, 1 failed, 0 skipped');
      } finally {
        quarantine([]);
      }
    });

    it('the real-time lane: its files out of the pool, run after the pool has ended, alone, as shard n of n with its own line and counts', async () => {
      const times = path.join(repo, 'test/support/test-times.json');
      const before = fs.readFileSync(times, 'utf8');
      const span = (name: string, body: string) => `describe('${name}', () => { it('runs', async function () { const t0 = Date.now(); ${body} console.log('span', '${name}', t0, Date.now()); }); });`;
      const files = {
        'test/q/slow.test.ts': span('slow', 'await new Promise((r) => setTimeout(r, 1500));'),
        'test/q/lane.test.ts': span('lane', ''),
        'test/r/quick.test.ts': `${span('quick', '')} describe('r', () => { it('fails on purpose', () => { throw new Error('boom'); }); });`,
      };
      for (const [f, body] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(repo, f)), { recursive: true });
        fs.writeFileSync(path.join(repo, f), spec(body));
      }
      const table = (realtime: string[]) => fs.writeFileSync(times, JSON.stringify({ seconds: { 'test/q': 20, 'test/r': 10, 'test/q/lane.test.ts': 3 }, realtime }));
      try {
        table(['test/q/lane.test.ts']);
        const { code, out, killed } = await run(repo, [], { ...env(), TEST_JOBS: '2', TEST_DIRS: 'test/q test/r' }, 90_000);
        expect(killed, out).to.equal(false);
        expect(code, out).to.equal(1);
        expect(out).to.include('2 shards (TEST_SHARDS from the times table: ≤ 20 s each), 2 at a time (TEST_JOBS=2), then the real-time lane (shard 3/3) alone, about 23 s in all');
        expect(out).to.include('real-time lane, shard 3/3, about 3 s, expected 20–23 s, after the pool, alone: test/q/lane.test.ts');
        expect(out).to.match(/^\[test\] shard 1\/3, about 20 s, expected 0–20 s: test\/q$/m);
        const spans = Object.fromEntries([...out.matchAll(/^span (\w+) (\d+) (\d+)$/gm)].map((m) => [m[1], { from: Number(m[2]), to: Number(m[3]) }]));
        expect(Object.keys(spans).sort(), out).to.deep.equal(['lane', 'quick', 'slow']);
        expect(spans.lane!.from, 'the lane starts after every pool shard has ended').to.be.at.least(Math.max(spans.slow!.to, spans.quick!.to));
        const lines = out.trimEnd().split('\n');
        const block = lines.slice(lines.findIndex((l) => l.startsWith('[test] ──── shard 3/3 (real-time lane, alone): test/q/lane.test.ts ────')));
        expect(block.length, out).to.be.below(lines.length);
        expect(block.slice(0, block.indexOf('[test] ──── end of shard 3/3 ────')).join('\n')).to.include('[shard 3/3] 1 passed, 0 failed, 0 skipped');
        expect(out, 'the lane in no pool shard').not.to.match(/^\[shard [12]\/3\] .*lane/m);
        expect(out).to.match(/^\[test\] shard 3\/3 \(real-time lane\): \d+ s \(about 3 s expected\), 1 passed, 0 failed, 0 skipped, exit 0$/m);
        const slices = [...out.matchAll(/^slice (\d) (\{.*\})$/gm)].map((m) => ({ shard: m[1], ...(JSON.parse(m[2]!) as { min: number; max: number }) }));
        // alone after the pool: on the first worker's slot, 1 of TEST_JOBS
        expect(
          slices.find((x) => x.shard === '3'),
          JSON.stringify(slices),
        ).to.deep.include(shardSlice('free', 1, { TEST_PORT_SLOT: '1', TEST_PORT_SLOTS: '2' }));
        expect(lines.at(-1)).to.equal('3 passed, 1 failed, 0 skipped');
        // narrowed to the lane alone: no pool shard, the lane is shard 1/1
        const alone = await run(repo, [], { ...env(), TEST_DIRS: 'test/q/lane.test.ts' });
        expect(alone.code, alone.out).to.equal(0);
        expect(alone.out).to.include('[shard 1/1] 1 passed, 0 failed, 0 skipped');
        expect(alone.out.trimEnd().split('\n').at(-1)).to.equal('1 passed, 0 failed, 0 skipped');
        // an entry that names no file stops the run before it starts
        table(['test/q/gone.test.ts']);
        const gone = await run(repo, [], { ...env(), TEST_DIRS: 'test/q' });
        expect(gone.code, gone.out).to.equal(2);
        expect(gone.out).to.include('test/support/test-times.json: "realtime" names no such spec file or directory: test/q/gone.test.ts').and.not.include('──── shard');
        expect(gone.out.trimEnd().split('\n').at(-1)).to.equal('0 passed, 1 failed, 0 skipped');
      } finally {
        fs.writeFileSync(times, before);
        for (const d of ['test/q', 'test/r']) fs.rmSync(path.join(repo, d), { recursive: true, force: true });
      }
    });

    it('a "heavy" entry that names no spec file or directory stops the run at once, as a "realtime" one does', async () => {
      const times = path.join(repo, 'test/support/test-times.json');
      const before = fs.readFileSync(times, 'utf8');
      try {
        fs.writeFileSync(times, JSON.stringify({ seconds: { 'test/a': 10, 'test/c': 1 }, heavy: ['test/a/one.test.ts', 'test/a/gone.test.ts', 'test/gone'] }));
        const gone = await run(repo, [], { ...env(), TEST_DIRS: 'test/a test/c' });
        expect(gone.code, gone.out).to.equal(2);
        expect(gone.out)
          .to.include('test/support/test-times.json: "heavy" names no such spec file or directory: test/a/gone.test.ts, test/gone (remove or mend the entry)')
          .and.not.include('──── shard');
        expect(gone.out.trimEnd().split('\n').at(-1)).to.equal('0 passed, 1 failed, 0 skipped');
      } finally {
        fs.writeFileSync(times, before);
      }
    });

    it('arguments narrow to one plain mocha run', async () => {
      const { code, out } = await run(repo, ['test/b/*.test.ts'], env());
      expect(code, out).to.equal(1);
      expect(out.trimEnd().split('\n').at(-1)).to.equal('1 passed, 1 failed, 0 skipped');
      expect(out).not.to.include('[shard');
      expect(out).to.match(/^slice - /m);
    });
  });
});
