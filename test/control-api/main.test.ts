import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { freePort } from '../../testkit/ports';

const ROOT = path.resolve(__dirname, '../..');

function run(env: Record<string, string>, onOutput: (out: string, child: ReturnType<typeof spawn>) => void) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'control-api/main.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const feed = (d: Buffer) => {
    out += d.toString();
    onOutput(out, child);
  };
  child.stdout.on('data', feed);
  child.stderr.on('data', feed);
  return new Promise<{ code: number | null; out: string }>((resolve) => child.on('exit', (code) => resolve({ code, out })));
}

describe('control-api process (main.ts)', function () {
  this.timeout(60_000);

  it('refuses to start on bad configuration, one line per bad variable, exit 1', async () => {
    const r = await run({ HTTP_PORT: 'http', LOG_LEVEL: 'chatty', DATABASE_URL: 'postgres://x@127.0.0.1:1/x' }, () => undefined);
    expect(r.code).to.equal(1);
    expect(r.out).to.include('invalid configuration');
    expect(r.out).to.match(/HTTP_PORT: must be a port number/);
    expect(r.out).to.match(/LOG_LEVEL: must be one of/);
  });

  it('migrates, prints the first-start admin once, serves, and exits 0 on SIGTERM', async () => {
    const base = process.env.TEST_DATABASE_URL!;
    const name = `platform_test_main_${process.pid}`;
    const admin = knexFactory({ client: 'pg', connection: base, pool: { min: 0, max: 1 } });
    await admin.raw('drop database if exists ?? with (force)', [name]);
    await admin.raw('create database ??', [name]);
    const u = new URL(base);
    u.pathname = '/' + name;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'main-test-'));
    try {
      const port = await freePort();
      const env = { DATABASE_URL: u.toString(), REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_KEY_PREFIX: `main${process.pid}:`, DATA_DIR: dataDir, HTTP_PORT: String(port), LOG_LEVEL: 'warn' };
      let checked = null as Promise<void> | null; // set inside the output callback
      const first = await run(env, (out, child) => {
        if (checked || !out.includes('listening on')) return;
        checked = (async () => {
          const key = /accesskey: (\S+)/.exec(out)![1];
          const res = await fetch(`http://127.0.0.1:${port}/v1.0/customer?accesskey=${key}`);
          expect(res.status).to.equal(200);
          expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).to.equal(200);
        })().finally(() => child.kill('SIGTERM'));
      });
      expect(checked, 'the platform never said it was listening').to.not.equal(null);
      await checked;
      expect(first.code).to.equal(0);
      expect(first.out).to.include('First start: an admin account was created');
      expect(fs.readFileSync(path.join(dataDir, 'bootstrap.txt'), 'utf8')).to.match(/^password=\S+$/m);
      // Second start: no new admin, nothing printed.
      const second = await run(env, (out, child) => {
        if (out.includes('listening on')) child.kill('SIGTERM');
      });
      expect(second.code).to.equal(0);
      expect(second.out).to.not.include('First start');
    } finally {
      await admin.raw('drop database if exists ?? with (force)', [name]).catch(() => undefined);
      await admin.destroy();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
