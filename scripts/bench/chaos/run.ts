/**
 * Chaos under load (issue 52): with --calls live calls (sipp on loopback into a number whose flow talks
 * for minutes, the platform's audio flowing to each caller), kill -9 each part of the platform in turn
 * and measure per fault: calls lost (ended although nobody hung up), time until the API answers and a
 * new call is answered again, and the records left wrong once things settled. A round without a fault
 * comes first: it is the baseline (every figure 0) that shows the detectors do not see losses that are
 * not there.
 *
 * The platform's processes run as children (testkit/reliability/processes.ts), each started again 2 s
 * after it dies: a per-process supervisor, because scripts/start.ts on main stops the whole node when one
 * child dies (systemd's Restart=on-failure then starts all of it again). Postgres (own initdb) and Redis
 * (own, appendonly) are killed with SIGKILL and started again 2 s later on the same data. "media-worker"
 * ends one media worker thread of media-app (testkit/reliability/worker-kill.cjs: a thread cannot be
 * killed alone from outside).
 *
 *   source .data/env && npx tsx scripts/bench/chaos/run.ts [--calls 50] [--hold 40] [--rate 10]
 *        [--faults control-api,sip-server,media-app,media-worker,redis,postgres]
 *
 * One line per fault; the report also goes to dist/bench/chaos.md. Each round is bounded: the calls
 * hang up after --hold seconds, the probes stop 30 s after the fault, the records get 15 s to settle.
 */
import fs from 'node:fs';
import { killAllSipp } from '../../../testkit/media-app/harness';
import { reportPath } from '../report';
import { apiAnswers, callAnswers, runRound, type Fault, type RoundResult } from './round';
import { startStand, type Stand } from './stand';

const ALL: Fault[] = ['control-api', 'sip-server', 'media-app', 'media-worker', 'redis', 'postgres'];
const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The platform is whole again: every process ready, the API and a new call answered (90 s at most). */
async function healthy(s: Stand): Promise<void> {
  const end = Date.now() + 90_000;
  for (;;) {
    const procs = Object.values(s.pp.procs).every((p) => p.up && p.readyAt);
    if (procs && (await apiAnswers(s).catch(() => false)) && (await callAnswers(s))) return;
    if (Date.now() > end)
      throw new Error(
        `platform not healthy again:\n${Object.values(s.pp.procs)
          .map((p) => `${p.name} up=${p.up}: ${p.out.slice(-1500)}`)
          .join('\n')}`,
      );
    await sleep(1000);
  }
}

const secs = (ms: number) => (ms < 0 ? 'not within 30 s' : `${(ms / 1000).toFixed(1)} s`);

export function line(r: RoundResult): string {
  return (
    `${r.fault.padEnd(12)} ${r.calls} calls (${r.up} up): lost ${r.lost} (BYE from platform ${r.byeFromPlatform}, own BYE refused ${r.byeRefused}, audio stopped ${r.mediaStopped}); ` +
    `API answers after ${secs(r.apiMs)}, new call after ${secs(r.callMs)}; ` +
    `records wrong: ${r.notHangup} not hangup, ${r.billingOpen} billing open, ${r.billingMissing} without billing, ${r.flowsRunning} flows running; load ${r.load.toFixed(1)}`
  );
}

async function main(): Promise<void> {
  const calls = Number(arg('calls', '50'));
  const holdMs = Number(arg('hold', '40')) * 1000;
  const rate = Number(arg('rate', '10'));
  const faults = arg('faults', ALL.join(',')).split(',') as Fault[];
  for (const f of faults) if (!ALL.includes(f)) throw new Error(`unknown fault ${f} (known: ${ALL.join(', ')})`);
  const s = await startStand();
  const results: RoundResult[] = [];
  const restarts = () => Object.values(s.pp.procs).map((p) => `${p.name} ${p.runs - 1}`);
  try {
    console.log(`chaos: ${calls} calls per round, held ${holdMs / 1000} s, ${rate} calls/s; load ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    for (const fault of ['none' as Fault, ...faults]) {
      await healthy(s);
      const r = await runRound(s, fault, { calls, holdMs, rate, recoveryBoundMs: 30_000, settleMs: 15_000 });
      results.push(r);
      console.log(line(r));
    }
    console.log(`restarts: ${restarts().join(', ')}`);
  } finally {
    killAllSipp();
    await s.close();
  }
  const md = [
    `# chaos (${new Date().toISOString().slice(0, 10)}): ${calls} calls, held ${holdMs / 1000} s`,
    '',
    '| fault | lost | BYE from platform | own BYE refused | audio stopped | API back (s) | new call (s) | not hangup | billing open | no billing | flows running | load |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...results.map(
      (r) =>
        `| ${r.fault} | ${r.lost}/${r.calls} | ${r.byeFromPlatform} | ${r.byeRefused} | ${r.mediaStopped} | ${(r.apiMs / 1000).toFixed(1)} | ${(r.callMs / 1000).toFixed(1)} | ${r.notHangup} | ${r.billingOpen} | ${r.billingMissing} | ${r.flowsRunning} | ${r.load.toFixed(1)} |`,
    ),
    '',
  ].join('\n');
  fs.writeFileSync(reportPath('chaos'), md);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    killAllSipp();
    process.exit(1);
  },
);
