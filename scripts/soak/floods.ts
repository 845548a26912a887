/**
 * Long form of the flood battery (issue 13, item 2): --calls sipp calls carrying the platform's RTP
 * while one source floods --rate INVITE/s for --seconds and another brute-forces an extension's
 * REGISTER (--attempts wrong passwords). Prints the report as JSON and PASS/FAIL on the same lines
 * as test/reliability/floods.test.ts: RTP loss < 1%, flooder banned < 2 s, AOR locked after
 * --lock-after failures (403 + Retry-After, the right password too) and unlocked after --lock-sec,
 * unknown user answered like a wrong password.
 *
 *   source .data/env && npx tsx scripts/soak/floods.ts [--calls 100] [--rate 1000] [--seconds 10] [--attempts 200]
 */
process.env.LOG_LEVEL ??= 'silent';
import { runFloods } from '../../testkit/reliability/sip/flood';
import { numberArg as arg, runMain } from './cli';

async function main(): Promise<void> {
  const o = {
    calls: arg('calls', 100),
    floodRate: arg('rate', 1000),
    floodSeconds: arg('seconds', 10),
    attempts: arg('attempts', 200),
    lockoutFailures: arg('lock-after', 5),
    lockoutSec: arg('lock-sec', 30), // longer than the guessing lasts, so one lock covers it
  };
  console.log(`floods: ${JSON.stringify(o)}`);
  // two RTP ports per call and then some: a range of its own, as scripts/bench/calls does
  const min = 40000 + 400 * Math.floor(Math.random() * 20);
  const r = await runFloods({ ...o, platformEnv: { RTP_PORT_MIN: String(min), RTP_PORT_MAX: String(min + Math.max(400, o.calls * 4)) }, log: (s) => console.log(`  ${s}`) });
  console.log(JSON.stringify(r, null, 1));
  const b = r.bruteForce;
  const checks: [string, boolean][] = [
    ['all calls carried RTP and completed', r.rtp.streams === o.calls && r.sipp.code === 0],
    ['RTP loss < 1%', r.rtp.lossPct < 1],
    ['flooder banned < 2 s', r.flood.bannedAfterMs !== null && r.flood.bannedAfterMs < 2000 && r.flood.lastAnsweredSentAtMs < 2000 && !r.flood.probeFromFlooderAnswered],
    ['other sources served', r.flood.probeFromOtherAnswered],
    [
      'AOR locked, right password refused while locked',
      b.statuses.slice(o.lockoutFailures - 2).every((x) => x.status === 403 && Number(x.retryAfter) > 0) && b.rightPasswordWhileLocked.status === 403,
    ],
    ['AOR unlocked after the lock time', b.rightPasswordAfterLock === 200],
    ['unknown user answered like a wrong password', JSON.stringify(r.shapes.existing) === JSON.stringify(r.shapes.unknown) && b.unknownAorLocked.status === 403],
  ];
  for (const [what, ok] of checks) console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  const ok = checks.every(([, v]) => v);
  console.log(ok ? 'PASS' : 'FAIL');
  process.exitCode = ok ? 0 : 1;
}

runMain(main, 500);
