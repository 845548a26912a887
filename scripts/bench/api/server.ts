/**
 * What the API benchmarks share: a control-api process (from any checkout) on loopback against its own
 * fresh database, the bare node:http baseline, CPU seconds from /proc, and one autocannon run.
 * Both servers are pinned to one CPU with taskset when available.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import knexFactory, { type Knex } from 'knex';
import { freePort } from '../../../testkit/ports';

export const ROOT = path.resolve(__dirname, '../../..');
export const CPU = String(Math.max(0, os.cpus().length - 1));
export const hasTaskset = spawnSync('taskset', ['--version']).status === 0;

export function pinned(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd = ROOT): ChildProcess {
  const [c, a] = hasTaskset ? ['taskset', ['-c', CPU, cmd, ...args]] : [cmd, args];
  return spawn(c, a, { cwd, env, stdio: ['pipe', 'pipe', 'inherit'] });
}

export function waitFor(child: ChildProcess, re: RegExp, ms = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`timeout waiting for ${re}: ${out}`)), ms);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (re.test(out)) {
        clearTimeout(t);
        resolve(out);
      }
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc (clock ticks of 10 ms). */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

export interface Result {
  name: string;
  /** Server CPU milliseconds per request: throughput one free core would give is 1000 / this. */
  cpuMsPerReq: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Raw sums, for adding runs up. */
  cpuSec: number;
  requests: number;
}

export async function cannon(name: string, server: ChildProcess, opts: autocannon.Options & { connections: number; duration: number }): Promise<Result> {
  const cpu0 = cpuSeconds(server.pid);
  const r = await autocannon({ pipelining: 1, ...opts });
  const cpuSec = cpuSeconds(server.pid) - cpu0;
  const cpuMsPerReq = (cpuSec * 1000) / Math.max(1, r.requests.total);
  return { name, cpuMsPerReq, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts, cpuSec, requests: r.requests.total };
}

export interface ApiUnderTest {
  api: ChildProcess;
  url: string;
  /** The bootstrap customer's accesskey and admin username. */
  accesskey: string;
  username: string;
  jwtSecret: string;
  /** The benchmark database (for reads the benchmark makes). */
  db: Knex;
  stop(): Promise<void>;
}

/**
 * Starts `control-api/main.ts` of the checkout at `root` (RATE_LIMIT_SCALE=0 unless BENCH_RATE_LIMIT_SCALE
 * says otherwise, LOG_LEVEL=warn) on a fresh database of its own; `nodeArgs` go before the script.
 */
export async function startApi(root: string, nodeArgs: string[] = []): Promise<ApiUnderTest> {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('DATABASE_URL is not set (source .data/env)');
  const dbName = `platform_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = knexFactory({ client: 'pg', connection: base, pool: { min: 0, max: 1 } });
  await admin.raw('create database ??', [dbName]);
  const u = new URL(base);
  u.pathname = '/' + dbName;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-api-'));
  const port = await freePort();
  const jwtSecret = 'bench-secret-'.padEnd(48, 'x');
  const env = {
    ...process.env,
    DATABASE_URL: u.toString(),
    DATA_DIR: dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(port),
    // BENCH_RATE_LIMIT_SCALE=1: the production limits (two Redis calls per request) instead of none.
    RATE_LIMIT_SCALE: process.env.BENCH_RATE_LIMIT_SCALE ?? '0',
    METRICS_LISTEN: 'off',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    JWT_SECRET: jwtSecret,
    REDIS_KEY_PREFIX: `bench${process.pid}${dbName.slice(-6)}:`,
  };
  const api = pinned(process.execPath, [...nodeArgs, '--import', 'tsx', 'control-api/main.ts'], env, root);
  const db = knexFactory({ client: 'pg', connection: u.toString(), pool: { min: 0, max: 1 } });
  const stop = async () => {
    api.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await db.destroy();
    await admin.raw('drop database if exists ?? with (force)', [dbName]).catch(() => undefined);
    await admin.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitFor(api, /listening on/);
    const boot = Object.fromEntries(
      fs
        .readFileSync(path.join(dataDir, 'bootstrap.txt'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('='))
        .map((l) => l.split('=') as [string, string]),
    );
    return { api, url: `http://127.0.0.1:${port}`, accesskey: boot.accesskey, username: boot.username, jwtSecret, db, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** The bare node:http server answering `body` (baseline.ts), pinned like the API. */
export async function startBaseline(body: string): Promise<{ server: ChildProcess; url: string }> {
  const port = await freePort();
  const server = pinned(process.execPath, ['--import', 'tsx', 'scripts/bench/api/baseline.ts', String(port)], process.env);
  server.stdin!.end(body);
  await waitFor(server, /ready/);
  return { server, url: `http://127.0.0.1:${port}` };
}

export const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
export const machine = () => `${os.cpus().length} x ${os.cpus()[0].model}`;
