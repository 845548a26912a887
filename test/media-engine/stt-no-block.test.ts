// The recogniser's input never holds one of libuv's threadpool threads: a pocketsphinx that dies
// (or hangs) before it opens its input must neither keep the process from exiting nor stall file
// I/O and DNS lookups of the whole process. Each scenario runs in a node process of its own.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';

const FIXTURE = path.join(__dirname, 'fixtures', 'stt-dies.ts');

function run(args: string[], limitMs: number): Promise<{ code: number | null; ms: number; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', FIXTURE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, limitMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      // recognisers the scenario stopped or left behind go with it
      for (const line of stdout.split('\n')) {
        const pids = line.startsWith('{"pids"') ? (JSON.parse(line) as { pids: number[] }).pids : [];
        for (const p of pids)
          try {
            process.kill(p, 'SIGKILL');
          } catch {
            /* gone */
          }
      }
      resolve({ code, ms: Date.now() - t0, stdout, stderr, timedOut });
    });
  });
}

describe('media-engine/stt: no blocking resource (pocketsphinx input)', function () {
  this.timeout(30_000);

  it('recognisers killed before they read: the process still exits at once', async () => {
    const r = await run(['kill', '5'], 15_000);
    expect(r.timedOut, `process did not exit (held for ${r.ms} ms): ${r.stderr}`).to.equal(false);
    expect(r.code, r.stderr).to.equal(0);
  });

  it('five recognisers hung before they read: file reads and DNS lookups of the process go on', async () => {
    const r = await run(['stall', '5'], 20_000);
    expect(r.code, r.stderr).to.equal(0);
    const { readMs, dnsMs } = JSON.parse(r.stdout.trim().split('\n').pop()!) as { readMs: number; dnsMs: number };
    expect(readMs, 'fs.promises.readFile stalled').to.be.within(0, 1000);
    expect(dnsMs, 'dns.lookup stalled').to.be.within(0, 1000);
  });
});
