/**
 * The evals worker yields the cores (evals/priority.ts): every thread it has, and every thread and child it
 * starts later, runs at EVALS_NICE. Read back from /proc in a real child process: a nice value is a thread's
 * on Linux, so lowering only the main thread would leave V8's and libuv's threads (and a media worker) at 0.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';

/** The child: starts a worker thread, yields, starts another, runs `sh` and reports every thread's nice and the shell's. */
const CHILD = `
const { Worker } = require('node:worker_threads');
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const { yieldCores } = require(${JSON.stringify(path.join(__dirname, '../../evals/priority.ts'))});
const spin = () => new Worker('setInterval(() => undefined, 1000)', { eval: true });
const before = spin();
before.once('online', () => {
  const y = yieldCores(Number(process.env.NICE));
  const after = spin();
  after.once('online', () => {
    const nice = (f) => Number(fs.readFileSync(f, 'utf8').split(') ')[1].split(' ')[16]);
    const threads = fs.readdirSync('/proc/self/task').map((t) => nice('/proc/self/task/' + t + '/stat'));
    const shell = Number(execFileSync('sh', ['-c', 'cut -d" " -f19 /proc/$$/stat']).toString().trim());
    process.stdout.write(JSON.stringify({ y, threads, shell }));
    process.exit(0);
  });
});
`;

function run(nice: number): Promise<{ y: { nice: number; threads: number; failed: string[] }; threads: number[]; shell: number }> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['--import', 'tsx', '-e', CHILD], { env: { ...process.env, NICE: String(nice) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('error', reject);
    c.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as Awaited<ReturnType<typeof run>>) : reject(new Error(`child exited ${code}: ${err}`))));
  });
}

describe('evals: the worker yields the cores (EVALS_NICE)', () => {
  it('every thread, a thread started later and a child process run at the nice value asked for', async function () {
    this.timeout(20_000);
    const want = Math.min(19, os.getPriority() + 7);
    const r = await run(want);
    expect(r.y.failed).to.deep.equal([]);
    expect(r.y.threads).to.be.greaterThan(4); // main, V8's platform threads, libuv's, the first worker
    expect(r.threads.length).to.be.greaterThan(r.y.threads - 1); // the later worker's thread(s) too
    expect(
      r.threads.every((n) => n === want),
      JSON.stringify(r.threads),
    ).to.equal(true);
    expect(r.shell).to.equal(want);
  });

  it('0 leaves the priority as started', async function () {
    this.timeout(20_000);
    const r = await run(0);
    expect(r.y.threads).to.equal(0);
    expect(
      r.threads.every((n) => n === os.getPriority()),
      JSON.stringify(r.threads),
    ).to.equal(true);
  });
});
