/**
 * Long form of the fault battery (issue 13 item 4): kill -9 of a media-app node with N calls up,
 * then a Redis restart under queued originates, each `--rounds` times; a line per round and PASS/FAIL.
 *
 *   source .data/env && npx tsx scripts/soak/faults.ts [--calls 50] [--redis-calls 10] [--rounds 1] [--only node|redis]
 *
 * Needs TEST_DATABASE_URL and TEST_REDIS_URL (the node fault runs on the test Redis under its own
 * key prefix; the Redis fault starts its own redis-server).
 */
import { runNodeFault } from '../../testkit/reliability/node-fault';
import { runRedisFault } from '../../testkit/reliability/redis-fault';
import { killAllSipp } from '../../testkit/media-app/harness';
import { testDb, testDatabaseUrl } from '../../testkit/db';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};

async function main(): Promise<void> {
  const calls = Number(arg('calls', '50'));
  const redisCalls = Number(arg('redis-calls', '10'));
  const rounds = Number(arg('rounds', '1'));
  const only = arg('only', '');
  const db = await testDb();
  const problems: string[] = [];
  for (let round = 1; round <= rounds; round++) {
    if (only !== 'redis') {
      const r = await runNodeFault({ db, databaseUrl: await testDatabaseUrl(), redisUrl: process.env.TEST_REDIS_URL!, calls });
      const bad = (what: string, ok: boolean) => !ok && problems.push(`round ${round} node: ${what}`);
      bad('a caller got no BYE', r.byeAll);
      bad(`BYE after ${r.byeMs} ms`, r.byeMs < 5000);
      bad(
        'a call not hangup/local/normal',
        r.rows.every((x) => x.status === 'hangup' && x.hangup_by === 'local' && x.hangup_reason === 'normal'),
      );
      bad(
        'call_hangup not published once per call',
        r.rows.every((x) => r.hangupEvents.get(x.id) === 1),
      );
      bad(
        'a recording not ended or its header wrong',
        r.recordings.every((x) => x.status === 'ended' && x.declaredBytes === x.fileBytes - 44 && x.durationMs > 1000),
      );
      bad(`RTP ports still held: ${r.rtpPorts - r.rtpPortsFreed}`, r.rtpPortsFreed === r.rtpPorts);
      bad(
        'a queued command not failed',
        r.commands.every((c) => c.state === 'failed'),
      );
      bad('the command applied before the kill changed', r.appliedBefore.state === 'completed' && r.appliedBefore.attempts === 1);
      bad(`${r.sipDialogsLeft} dialogs left in sip-server`, r.sipDialogsLeft === 0);
      const secs = r.recordings.map((x) => x.durationMs / 1000);
      console.log(
        `round ${round} kill -9: ${r.calls} calls, BYE to all ${r.byeAll ? 'yes' : 'NO'} within ${r.byeMs} ms, records final after ${r.finalisedMs} ms, ` +
          `${r.recordings.length} recordings valid (${Math.min(...secs).toFixed(2)}-${Math.max(...secs).toFixed(2)} s), ` +
          `RTP ports freed ${r.rtpPortsFreed}/${r.rtpPorts}, queued commands failed ${r.commands.filter((c) => c.state === 'failed').length}/${r.commands.length}`,
      );
    }
    if (only !== 'node') {
      const r = await runRedisFault({ db, calls: redisCalls });
      const bad = (what: string, ok: boolean) => !ok && problems.push(`round ${round} redis: ${what}`);
      bad('registration lost', r.bindingsAfter === r.bindingsBefore && r.bindingsBefore === 1);
      bad('queued command lost', r.waitingAfter === redisCalls);
      bad('same command id queued twice', r.jobsAfterDuplicate === redisCalls);
      bad(
        'a command not completed exactly once',
        r.jobs.every((j) => j.state === 'completed' && j.attempts === 1),
      );
      bad(`${r.invitesAtPhone} INVITEs for ${redisCalls} commands`, r.invitesAtPhone === redisCalls);
      bad('heartbeat not back', r.heartbeatBack);
      console.log(
        `round ${round} redis restart (${r.restartMs} ms): binding ${r.bindingsBefore}->${r.bindingsAfter}, queued ${r.waitingBefore}->${r.waitingAfter}, ` +
          `after re-enqueue ${r.jobsAfterDuplicate} jobs, INVITEs at the phone ${r.invitesAtPhone}, jobs completed once ${r.jobs.filter((j) => j.state === 'completed' && j.attempts === 1).length}`,
      );
    }
  }
  killAllSipp();
  for (const p of problems) console.log(`  ${p}`);
  console.log(problems.length ? 'FAIL' : 'PASS');
  process.exit(problems.length ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  killAllSipp();
  process.exit(1);
});
