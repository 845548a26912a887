/**
 * API benchmark: starts control-api (RATE_LIMIT_SCALE=0, LOG_LEVEL=warn) on loopback against a fresh
 * database, then drives it with autocannon: authenticated GET /v1.0/customer (accesskey and JWT) and
 * POST /v1.0/accesskeys; a bare node:http server returning the same JSON is measured in the same run.
 * Both servers are pinned to one CPU with taskset when available.
 *
 *   source .data/env && npx tsx scripts/bench/api/run.ts [--duration 10] [--connections 10] [--quick]
 * --quick: only the baseline GET and the accesskey GET (the target row). BENCH_API_NODE_ARGS adds node
 * flags to control-api, e.g. BENCH_API_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/api-prof".
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import knexFactory from 'knex';
import { freePort } from '../../../test/support/ports';
import { signToken } from '../../../core/credentials';

const ROOT = path.resolve(__dirname, '../../..');
const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const DURATION = arg('duration', 10);
const QUICK = process.argv.includes('--quick');
const EXTRA_NODE_ARGS = (process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean);
const CONNECTIONS = arg('connections', 10);
const CPU = String(Math.max(0, os.cpus().length - 1));
const hasTaskset = spawnSync('taskset', ['--version']).status === 0;

function pinned(cmd: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const [c, a] = hasTaskset ? ['taskset', ['-c', CPU, cmd, ...args]] : [cmd, args];
  return spawn(c, a, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'inherit'] });
}

function waitFor(child: ChildProcess, re: RegExp, ms = 60_000): Promise<string> {
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
function cpuSeconds(pid: number | undefined): number {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

interface Result {
  name: string;
  /** Server CPU milliseconds per request: throughput one free core would give is 1000 / this. */
  cpuMsPerReq: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function cannon(name: string, server: ChildProcess, opts: autocannon.Options): Promise<Result> {
  const cpu0 = cpuSeconds(server.pid);
  const r = await autocannon({ connections: CONNECTIONS, duration: DURATION, pipelining: 1, ...opts });
  const cpuMsPerReq = ((cpuSeconds(server.pid) - cpu0) * 1000) / Math.max(1, r.requests.total);
  return { name, cpuMsPerReq, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts };
}

async function main() {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('DATABASE_URL is not set (source .data/env)');
  const dbName = `platform_bench_${process.pid}`;
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
    RATE_LIMIT_SCALE: '0',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    JWT_SECRET: jwtSecret,
    REDIS_KEY_PREFIX: `bench${process.pid}:`,
  };
  const api = pinned(process.execPath, [...EXTRA_NODE_ARGS, '--import', 'tsx', 'control-api/main.ts'], env);
  let baseline: ChildProcess | undefined;
  const db = knexFactory({ client: 'pg', connection: u.toString(), pool: { min: 0, max: 1 } });
  try {
    await waitFor(api, /listening on/);
    const boot = Object.fromEntries(
      fs.readFileSync(path.join(dataDir, 'bootstrap.txt'), 'utf8').split('\n').filter((l) => l.includes('=')).map((l) => l.split('=') as [string, string]),
    );
    const agent = await db('agents').where({ username: boot.username }).first();
    const { token } = await signToken(jwtSecret, { typ: 'login', sub: agent.id, customer_id: agent.customer_id }, 3600);
    const url = `http://127.0.0.1:${port}`;
    const sample = await fetch(`${url}/v1.0/customer?accesskey=${boot.accesskey}`);
    const body = await sample.text();
    if (sample.status !== 200) throw new Error(`GET /v1.0/customer: ${sample.status} ${body}`);

    const bport = await freePort();
    baseline = pinned(process.execPath, ['--import', 'tsx', 'scripts/bench/api/baseline.ts', String(bport)], env);
    baseline.stdin!.end(body);
    await waitFor(baseline, /ready/);
    const burl = `http://127.0.0.1:${bport}`;

    const post = { method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench', detail: 'autocannon' }) };
    // Warm-up (JIT, pools) before measuring.
    await autocannon({ url: `${url}/v1.0/customer?accesskey=${boot.accesskey}`, connections: CONNECTIONS, duration: 2 });
    const results: Result[] = [];
    const bl = baseline;
    results.push(await cannon('baseline GET (bare node:http, same JSON)', bl, { url: `${burl}/v1.0/customer` }));
    if (!QUICK) results.push(await cannon('GET /healthz (same process: express, request id, metrics; no auth, no DB)', api, { url: `${url}/healthz` }));
    const getRow = results.length;
    results.push(await cannon('GET /v1.0/customer?accesskey=', api, { url: `${url}/v1.0/customer?accesskey=${boot.accesskey}` }));
    if (!QUICK) {
      results.push(await cannon('GET /v1.0/customer (Bearer JWT)', api, { url: `${url}/v1.0/customer`, headers: { authorization: `Bearer ${token}` } }));
      results.push(await cannon('baseline POST (bare node:http)', bl, { url: `${burl}/v1.0/accesskeys`, ...post }));
      results.push(await cannon('POST /v1.0/accesskeys?accesskey=', api, { url: `${url}/v1.0/accesskeys?accesskey=${boot.accesskey}`, ...post }));
    }

    const b = results[0].rps;
    const bp = results.find((r) => r.name.startsWith('baseline POST'))?.rps ?? NaN;
    const load = os.loadavg().map((l) => l.toFixed(1)).join(' ');
    console.log(`\ncontrol-api benchmark: ${DURATION}s per run, ${CONNECTIONS} connections, servers pinned to CPU ${hasTaskset ? CPU : '(no taskset)'}, ${os.cpus().length} x ${os.cpus()[0].model}, load average ${load}\n`);
    console.log('| run | req/s | p50 ms | p99 ms | non-2xx | errors | req/s vs baseline | server CPU ms/req | req/s per free core (1000/CPU ms) |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of results) {
      const ref = r.name.includes('POST') ? bp : b;
      console.log(`| ${r.name} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} | ${(r.rps / ref).toFixed(2)} | ${r.cpuMsPerReq.toFixed(3)} | ${Math.round(1000 / r.cpuMsPerReq)} |`);
    }
    const get = results[getRow];
    console.log(`\ntarget 2000 authenticated GET/s with p99 < 20 ms: ${get.rps >= 2000 && get.p99 < 20 ? 'met' : 'NOT met'} (${Math.round(get.rps)}/s, p99 ${get.p99} ms; CPU-bound capacity ${Math.round(1000 / get.cpuMsPerReq)}/s per core)`);
  } finally {
    api.kill('SIGTERM');
    baseline?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await db.destroy();
    await admin.raw('drop database if exists ?? with (force)', [dbName]).catch(() => undefined);
    await admin.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
