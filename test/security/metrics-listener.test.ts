/**
 * Finding 9: /metrics is not public on the API port. It is served by its own listener, on loopback
 * by default (METRICS_LISTEN, `off` disables it), and on the API port only with METRICS_TOKEN, to
 * `Authorization: Bearer <token>`. Real HTTP servers on loopback; one real control-api process.
 */
import http from 'node:http';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../../testkit/api';
import { testDatabaseUrl } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { loadConfig, ConfigError } from '../../core/config';
import { startMetricsListener } from '../../control-api/ops';

const ROOT = path.resolve(__dirname, '../..');

async function serve(t: TestApp): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(t.app);
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

describe('security: /metrics off the public API port (finding 9)', function () {
  this.timeout(60_000);

  it('the API port does not serve /metrics without METRICS_TOKEN', async () => {
    const t = await buildTestApp();
    const s = await serve(t);
    try {
      const res = await fetch(`${s.url}/metrics`);
      expect(res.status).to.equal(404);
      expect(await res.text()).to.not.include('http_requests_total');
    } finally {
      await s.close();
      await t.close();
    }
  });

  it('with METRICS_TOKEN the API port serves /metrics to that bearer token only', async () => {
    const token = 'metrics-token-0123456789abcdef';
    const t = await buildTestApp({ env: { METRICS_TOKEN: token } });
    const s = await serve(t);
    try {
      const none = await fetch(`${s.url}/metrics`);
      expect(none.status).to.equal(401);
      expect(((await none.json()) as { error: { reason: string } }).error.reason).to.equal('AUTHENTICATION_REQUIRED');
      const wrong = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${token}x` } });
      expect(wrong.status).to.equal(401);
      expect(((await wrong.json()) as { error: { reason: string } }).error.reason).to.equal('INVALID_CREDENTIALS');
      const ok = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).to.equal(200);
      expect(await ok.text()).to.include('http_requests_total');
    } finally {
      await s.close();
      await t.close();
    }
  });

  it('METRICS_LISTEN: loopback 127.0.0.1:9464 by default, host:port or off; a short token is refused', () => {
    const base = { DATA_DIR: os.tmpdir(), JWT_SECRET: 'x'.repeat(40) };
    expect(loadConfig(base).metricsListen).to.deep.equal({ host: '127.0.0.1', port: 9464 });
    expect(loadConfig({ ...base, METRICS_LISTEN: '[::1]:9100' }).metricsListen).to.deep.equal({ host: '::1', port: 9100 });
    expect(loadConfig({ ...base, METRICS_LISTEN: 'OFF' }).metricsListen).to.equal(null);
    expect(loadConfig(base).metricsToken).to.equal(null);
    for (const bad of [{ METRICS_LISTEN: '9464' }, { METRICS_LISTEN: 'localhost:99999' }, { METRICS_TOKEN: 'short' }]) {
      expect(() => loadConfig({ ...base, ...bad }), JSON.stringify(bad)).to.throw(ConfigError);
    }
  });

  it("the listener serves the API's metrics on its own port, and nothing else", async () => {
    const t = await buildTestApp();
    const s = await serve(t);
    const l = await startMetricsListener(t.platform.metrics, { host: '127.0.0.1', port: 0 });
    try {
      await fetch(`${s.url}/healthz`);
      const res = await fetch(`http://127.0.0.1:${l.address.port}/metrics`);
      expect(res.status).to.equal(200);
      expect(await res.text()).to.match(/http_requests_total\{method="GET",route="\/healthz",status="200"\} 1/);
      expect((await fetch(`http://127.0.0.1:${l.address.port}/v1.0/customer`)).status).to.equal(404);
      expect((await fetch(`http://127.0.0.1:${l.address.port}/metrics`, { method: 'POST' })).status).to.equal(404);
    } finally {
      await l.close();
      await s.close();
      await t.close();
    }
  });

  it('control-api (main.ts) opens the listener on METRICS_LISTEN and keeps /metrics off the API port', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'metrics-main-'));
    const env = {
      ...process.env,
      DATABASE_URL: await testDatabaseUrl(),
      REDIS_URL: process.env.TEST_REDIS_URL!,
      REDIS_KEY_PREFIX: `metrics${process.pid}:`,
      DATA_DIR: dataDir,
      HTTP_PORT: String(port),
      METRICS_LISTEN: `127.0.0.1:${metricsPort}`,
      LOG_LEVEL: 'warn',
    };
    const child = spawn(process.execPath, ['--import', 'tsx', 'control-api/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const end = Date.now() + 40_000;
      while (!out.includes('metrics on')) {
        if (Date.now() > end || child.exitCode !== null) throw new Error(`control-api did not open the metrics listener:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(out).to.include(`metrics on http://127.0.0.1:${metricsPort}/metrics`);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).to.equal(404);
      const m = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(m.status).to.equal(200);
      expect(await m.text()).to.include('process_cpu_user_seconds_total');
    } finally {
      child.kill('SIGTERM');
      expect(await exited).to.equal(0);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
