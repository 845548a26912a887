/**
 * Scale-out figures on this machine (testkit/scale/cluster.ts: the shipped Kamailio edge, two nodes, each
 * a sip-server in this process and a media-app child process):
 *  1. CPU per call through the edge vs straight to a node, same run: N short calls (answer, 1 s,
 *     hangup) each way; CPU = utime+stime of this process (sip-servers, sweepers, sipp bookkeeping
 *     excluded: sipp is its own process and not counted), the media-app processes and every Kamailio
 *     process, read from /proc before and after; the ratio is what the edge adds.
 *  2. calls per second through the edge with 1 node (the other set inactive at the dispatcher) and
 *     with 2 nodes: sipp offers M calls (answer, hangup) at a fixed high rate; completed calls over the
 *     wall time from first INVITE to last BYE answered. Each run is bounded (sipp -timeout 60 s).
 *
 *   source .data/env && NODE_ENV=test npx tsx scripts/bench/scale/run.ts [--calls 60] [--offered 300] [--rate 40]
 */
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { RtpSink, sipp, killAllSipp, uacWaitsForBye } from '../../../testkit/media-app/harness';
import { truncateAll } from '../../../testkit/db';
import { procStat } from '../../../media-engine/worker/proc-stat';
import { Cluster } from '../../../testkit/scale/cluster';
import { numberWithFlow } from '../../../testkit/scale/fixtures';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const CALLS = arg('calls', 60);
const OFFERED = arg('offered', 300);
const RATE = arg('rate', 40);

function cpuOf(pid: number): number {
  try {
    return procStat(pid).cpuMs / 1000;
  } catch {
    return 0;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

function cpu(c: Cluster): { platform: number; edge: number } {
  const kam = c.edge.pid ? [c.edge.pid, ...childrenOf(c.edge.pid)] : [];
  const platform = cpuOf(process.pid) + c.nodes.reduce((a, n) => a + cpuOf(n.pid), 0);
  return { platform, edge: kam.reduce((a, p) => a + cpuOf(p), 0) };
}

function loadavg(): string {
  return fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

async function batch(c: Cluster, number: string, port: number, calls: number, rate: number): Promise<{ ok: number; failed: number; ms: number }> {
  // one sink for the batch's calls
  const sink = await RtpSink.open({ many: true });
  const t0 = Date.now();
  try {
    const r = await sipp(
      uacWaitsForBye(`${number}@127.0.0.1:${port}`, 'pbx', sink.port, { byeTimeoutMs: 30_000 }),
      [`127.0.0.1:${port}`, '-i', '127.0.0.1', '-m', String(calls), '-r', String(rate), '-l', String(calls), '-timeout', '60s'],
      { killAfterMs: 65_000 },
    ).done;
    const ok = Number(/Successful call\s*\|\s*\d+\s*\|\s*(\d+)/.exec(r.stdout)?.[1] ?? (r.code === 0 ? calls : 0));
    const failed = Number(/Failed call\s*\|\s*\d+\s*\|\s*(\d+)/.exec(r.stdout)?.[1] ?? 0);
    return { ok, failed, ms: Date.now() - t0 };
  } finally {
    sink.close();
  }
}

async function main(): Promise<void> {
  await truncateAll();
  const c = await Cluster.start({ env: { LOG_LEVEL: 'warn' } });
  try {
    const oneSecond = await numberWithFlow(c.db, '127.0.0.1/32', [{ type: 'answer' }, { type: 'sleep', option: { duration: 1000 } }, { type: 'hangup' }]);
    const quick = await numberWithFlow(c.db, '127.0.0.1/32', [{ type: 'answer' }, { type: 'hangup' }], oneSecond.customerId);
    const out: string[] = [`load average at start: ${loadavg()} (2 cores shared with other sessions)`];

    // 1. CPU per call: direct to node 0, then through the edge with node 0 alone active (same node does the work)
    await c.edge.setState(c.nodes[1]!.sipPort, 'i');
    const runs: Record<string, { cpuPlatform: number; cpuEdge: number; ok: number; failed: number }> = {};
    for (const [name, port] of [
      ['direct', c.nodes[0]!.sipPort],
      ['edge', c.edge.port],
      ['direct (again)', c.nodes[0]!.sipPort],
    ] as const) {
      const before = cpu(c);
      const r = await batch(c, oneSecond.number, port, CALLS, 10);
      const after = cpu(c);
      runs[name] = { cpuPlatform: after.platform - before.platform, cpuEdge: after.edge - before.edge, ok: r.ok, failed: r.failed };
    }
    const per = (x: { cpuPlatform: number; cpuEdge: number; ok: number }) => ((x.cpuPlatform + x.cpuEdge) / Math.max(1, x.ok)) * 1000;
    const direct = (per(runs.direct!) + per(runs['direct (again)']!)) / 2;
    const edge = per(runs.edge!);
    out.push(
      `CPU per call (${CALLS} calls of 1 s each way, 10 calls/s): direct ${direct.toFixed(1)} ms, through the edge ${edge.toFixed(1)} ms (of which Kamailio ${((runs.edge!.cpuEdge / Math.max(1, runs.edge!.ok)) * 1000).toFixed(1)} ms); ratio ${(edge / direct).toFixed(2)}`,
    );
    out.push(`  runs: ${JSON.stringify(runs)}`);

    // 2. calls per second through the edge, 1 node then 2 nodes
    for (const nodes of [1, 2]) {
      await c.edge.setState(c.nodes[1]!.sipPort, nodes === 2 ? 'a' : 'i');
      const r = await batch(c, quick.number, c.edge.port, OFFERED, RATE);
      out.push(
        `${nodes} node${nodes > 1 ? 's' : ''}: ${OFFERED} calls offered at ${RATE}/s through the edge: ${r.ok} completed, ${r.failed} failed in ${(r.ms / 1000).toFixed(1)} s = ${(r.ok / (r.ms / 1000)).toFixed(1)} calls/s (load ${loadavg()})`,
      );
    }
    process.stdout.write(out.join('\n') + '\n');
  } finally {
    killAllSipp();
    await c.close();
  }
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
