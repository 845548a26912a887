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
import autocannon from 'autocannon';
import { signToken } from '../../../core/credentials';
import { cannon as run, CPU, hasTaskset, loadAverage, machine, ROOT, startApi, startBaseline, type Result } from './server';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const DURATION = arg('duration', 10);
const QUICK = process.argv.includes('--quick');
const EXTRA_NODE_ARGS = (process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean);
const CONNECTIONS = arg('connections', 10);

const cannon = (name: string, server: Parameters<typeof run>[1], opts: autocannon.Options) => run(name, server, { connections: CONNECTIONS, duration: DURATION, ...opts });

async function main() {
  const t = await startApi(ROOT, EXTRA_NODE_ARGS);
  let baseline: Awaited<ReturnType<typeof startBaseline>> | undefined;
  try {
    const agent = await t.db('agents').where({ username: t.username }).first();
    const { token } = await signToken(t.jwtSecret, { typ: 'login', sub: agent!.id, customer_id: agent!.customer_id }, 3600);
    const url = t.url;
    const api = t.api;
    const boot = { accesskey: t.accesskey };
    const sample = await fetch(`${url}/v1.0/customer?accesskey=${boot.accesskey}`);
    const body = await sample.text();
    if (sample.status !== 200) throw new Error(`GET /v1.0/customer: ${sample.status} ${body}`);

    baseline = await startBaseline(body);
    const burl = baseline.url;

    const post = { method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench', detail: 'autocannon' }) };
    // Warm-up (JIT, pools) before measuring.
    await autocannon({ url: `${url}/v1.0/customer?accesskey=${boot.accesskey}`, connections: CONNECTIONS, duration: 2 });
    const results: Result[] = [];
    const bl = baseline.server;
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
    console.log(`\ncontrol-api benchmark: ${DURATION}s per run, ${CONNECTIONS} connections, servers pinned to CPU ${hasTaskset ? CPU : '(no taskset)'}, ${machine()}, load average ${loadAverage()}\n`);
    console.log('| run | req/s | p50 ms | p99 ms | non-2xx | errors | req/s vs baseline | server CPU ms/req | req/s per free core (1000/CPU ms) |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of results) {
      const ref = r.name.includes('POST') ? bp : b;
      console.log(
        `| ${r.name} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} | ${(r.rps / ref).toFixed(2)} | ${r.cpuMsPerReq.toFixed(3)} | ${Math.round(1000 / r.cpuMsPerReq)} |`,
      );
    }
    const get = results[getRow];
    console.log(
      `\ntarget 2000 authenticated GET/s with p99 < 20 ms: ${get.rps >= 2000 && get.p99 < 20 ? 'met' : 'NOT met'} (${Math.round(get.rps)}/s, p99 ${get.p99} ms; CPU-bound capacity ${Math.round(1000 / get.cpuMsPerReq)}/s per core)`,
    );
  } finally {
    baseline?.server.kill('SIGTERM');
    await t.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
