/**
 * Before/after of the authenticated GET on a shared machine: control-api from several checkouts (each
 * on its own fresh database, all pinned to the same CPU) and the bare node:http baseline are driven in
 * short interleaved bursts, so every variant sees the same neighbours. CPU per request: over all bursts,
 * and the least and the median of the bursts' (the least is the one neighbours disturbed least); p99 is
 * the median of the bursts' p99s.
 *
 *   source .data/env && npx tsx scripts/bench/api/ab.ts --trees /tmp/old,/tmp/new [--rounds 8] [--seconds 2]
 * A checkout of another commit: `git worktree add --detach /tmp/old <commit> && ln -s $PWD/node_modules /tmp/old/`.
 */
import { cannon, CPU, hasTaskset, loadAverage, machine, startApi, startBaseline, type ApiUnderTest, type Result } from './server';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const TREES = arg('trees', '').split(',').filter(Boolean);
const ROUNDS = Number(arg('rounds', '8'));
const SECONDS = Number(arg('seconds', '2'));
const CONNECTIONS = Number(arg('connections', '10'));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  if (!TREES.length) throw new Error('--trees dirA,dirB: checkouts to compare');
  const apis: ApiUnderTest[] = [];
  let baseline: Awaited<ReturnType<typeof startBaseline>> | undefined;
  try {
    for (const t of TREES) apis.push(await startApi(t));
    const body = await (await fetch(`${apis[0].url}/v1.0/customer?accesskey=${apis[0].accesskey}`)).text();
    baseline = await startBaseline(body);
    const b = baseline;
    const variants = [
      { name: 'baseline GET (bare node:http, same JSON)', server: b.server, url: `${b.url}/v1.0/customer` },
      ...apis.map((a, i) => ({ name: `GET /v1.0/customer?accesskey= (${TREES[i]})`, server: a.api, url: `${a.url}/v1.0/customer?accesskey=${a.accesskey}` })),
    ];
    for (const v of variants) {
      const r = await fetch(v.url);
      if (r.status !== 200) throw new Error(`${v.name}: ${r.status} ${await r.text()}`);
      await cannon('warm-up', v.server, { url: v.url, connections: CONNECTIONS, duration: 2 });
    }
    const runs = new Map<string, Result[]>(variants.map((v) => [v.name, []]));
    const loads: string[] = [loadAverage()];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate the order each round so no variant always follows the same one.
      const order = round % 2 ? [...variants].reverse() : variants;
      for (const v of order) runs.get(v.name)!.push(await cannon(v.name, v.server, { url: v.url, connections: CONNECTIONS, duration: SECONDS }));
    }
    loads.push(loadAverage());
    console.log(
      `\ncontrol-api A/B: ${ROUNDS} rounds x ${SECONDS}s interleaved, ${CONNECTIONS} connections, servers pinned to CPU ${hasTaskset ? CPU : '(no taskset)'}, ${machine()}, load average ${loads.join(' → ')}\n`,
    );
    console.log('| run | req/s | p99 ms (median of rounds) | non-2xx | server CPU ms/req | least / median of rounds | vs baseline (least) | req/s per free core (least) |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    let base = NaN;
    for (const [name, rs] of runs) {
      const cpu =
        (rs.reduce((s, r) => s + r.cpuSec, 0) * 1000) /
        Math.max(
          1,
          rs.reduce((s, r) => s + r.requests, 0),
        );
      const least = Math.min(...rs.map((r) => r.cpuMsPerReq));
      if (Number.isNaN(base)) base = least;
      const rps = rs.reduce((s, r) => s + r.requests, 0) / (ROUNDS * SECONDS);
      const non2xx = rs.reduce((s, r) => s + r.non2xx + r.errors, 0);
      console.log(
        `| ${name} | ${Math.round(rps)} | ${median(rs.map((r) => r.p99))} | ${non2xx} | ${cpu.toFixed(3)} | ${least.toFixed(3)} / ${median(rs.map((r) => r.cpuMsPerReq)).toFixed(3)} | ${(least / base).toFixed(1)}× | ${Math.round(1000 / least)} |`,
      );
    }
  } finally {
    baseline?.server.kill('SIGTERM');
    for (const a of apis) await a.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
