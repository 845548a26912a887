/**
 * Memory per established call: sip-server + media-app (one process, as startPlatform runs them, with
 * one media worker thread) hold N answered calls from a sipp UAS, each running a flow that waits
 * (sleep) while its endpoint sends RTP. After a full GC in every thread the script reads the process
 * RSS, the main thread's heap and external memory and the media worker's heap; KB per call = the
 * growth from the 0-call level divided by the calls added. Postgres, Redis and sipp are not counted.
 *
 *   source .data/env && node --expose-gc --import tsx scripts/bench/calls/memory.ts [--levels 0,100,200]
 */
process.env.LOG_LEVEL ??= 'silent';
import { Redis } from 'ioredis';
import { parseActions } from '../../../core/flow';
import { flowsRepo } from '../../../core/repos/flows';
import { callsRepo } from '../../../core/repos/calls';
import { repos } from '../../../core/repos';
import { CommandBus } from '../../../core/commands/bus';
import { testDb } from '../../../testkit/db';
import { freePort, sippMediaPort } from '../../../testkit/ports';
import { startPlatform, sipp, type Platform } from '../../../testkit/media-app/harness';

const maybeGc = (globalThis as { gc?: () => void }).gc;
if (!maybeGc) {
  console.error('run with node --expose-gc --import tsx scripts/bench/calls/memory.ts');
  process.exit(2);
}
const gc: () => void = maybeGc;
const levelsArg = process.argv[process.argv.indexOf('--levels') + 1];
const LEVELS = process.argv.includes('--levels') ? levelsArg.split(',').map(Number) : [0, 100, 200];
if (LEVELS.some((n) => !Number.isInteger(n) || n < 0 || n > 1000) || LEVELS.some((n, i) => i > 0 && n <= LEVELS[i - 1]!)) {
  console.error(`bad --levels ${levelsArg}: increasing call counts, e.g. 0,100,200`);
  process.exit(2);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const KB = (b: number) => b / 1024;

interface Sample {
  calls: number;
  rss: number;
  heapUsed: number;
  external: number;
  workerHeap: number;
  workerExternal: number;
}

async function main(): Promise<void> {
  const p = await startPlatform({ RTP_PORT_MIN: '42000', RTP_PORT_MAX: '43999', MEDIA_WORKERS: '1' });
  const db = await testDb();
  const busRedis = new Redis(process.env.TEST_REDIS_URL!);
  const bus = new CommandBus({ redis: busRedis, keyPrefix: p.config.redisKeyPrefix });
  const max = LEVELS[LEVELS.length - 1]!;
  const uasPort = await freePort();
  const uas = sipp('', ['-sn', 'uas', '-i', '127.0.0.1', '-p', String(uasPort), '-mp', String(await sippMediaPort()), '-m', String(max), '-timeout', '600s'], { killAfterMs: 600_000 });
  await sleep(300);
  const cid = (await repos(db).customers.create({ email: `mem${Date.now()}@example.test`, status: 'active', name: 'bench' })).id;
  // an established call that waits: answered by the far end, its flow sleeping, its endpoint sending RTP
  const holdFlow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'sleep', option: { duration: 600_000 } }]) } as never);
  const ids: string[] = [];
  const samples: Sample[] = [];
  try {
    for (const target of LEVELS) {
      const add: string[] = [];
      while (ids.length + add.length < target) {
        const row = await callsRepo(db).create({
          customer_id: cid,
          flow_id: holdFlow.id,
          direction: 'outgoing',
          status: 'dialing',
          source: { type: 'tel', target: '+15550000000' },
          destination: { type: 'sip', target: `hold${ids.length + add.length}@127.0.0.1:${uasPort}` },
        });
        add.push(row.id);
      }
      for (const id of add) {
        void bus.originate([id], cid);
        await sleep(20); // 50 calls/s
      }
      ids.push(...add);
      const t0 = Date.now();
      for (;;) {
        const up = ids.length ? Number((await db('calls').whereIn('id', ids).where({ status: 'progressing' }).count({ n: 'id' }))[0]!.n) : 0;
        if (up >= ids.length) break;
        if (Date.now() - t0 > 60_000) throw new Error(`only ${up} of ${ids.length} calls came up`);
        await sleep(200);
      }
      samples.push(await measure(p, target));
    }
    printTable(samples);
  } finally {
    for (const id of ids) void bus.toCallOwner({ type: 'call.hangup', callId: id });
    await Promise.race([uas.done, sleep(15_000)]);
    await bus.close();
    busRedis.disconnect();
    await p.close();
    await db.destroy();
  }
}

/** The memory at `calls` established calls, once the ramp's work has settled and after GCs; one line of it printed. */
async function measure(p: Platform, calls: number): Promise<Sample> {
  await sleep(3000); // let the ramp's transient work (events, queue jobs) finish
  const workers = await p.engine().memory();
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(100);
  }
  const m = process.memoryUsage();
  const s = { calls, rss: m.rss, heapUsed: m.heapUsed, external: m.external, workerHeap: workers.reduce((a, w) => a + w.heapUsed, 0), workerExternal: workers.reduce((a, w) => a + w.external, 0) };
  console.log(
    JSON.stringify({
      calls,
      live: p.app.calls.size,
      legs: workers.map((w) => w.legs),
      rssMB: +(m.rss / 2 ** 20).toFixed(1),
      heapMB: +(m.heapUsed / 2 ** 20).toFixed(1),
      workerHeapMB: +(s.workerHeap / 2 ** 20).toFixed(1),
    }),
  );
  return s;
}

/** The samples as a table, and per call over the first level. */
function printTable(samples: Sample[]): void {
  const b = samples[0]!;
  console.log(`\n| established calls | process RSS MB | main heap MB | main external MB | media worker heap MB | KB/call RSS | KB/call main heap | KB/call main external | KB/call worker heap |`);
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const s of samples) {
    const n = s.calls - b.calls;
    const per = (x: number, y: number) => (n > 0 ? KB((x - y) / n).toFixed(1) : '–');
    const mb = (x: number) => (x / 2 ** 20).toFixed(1);
    console.log(
      `| ${s.calls} | ${mb(s.rss)} | ${mb(s.heapUsed)} | ${mb(s.external)} | ${mb(s.workerHeap)} | ${per(s.rss, b.rss)} | ${per(s.heapUsed, b.heapUsed)} | ${per(s.external, b.external)} | ${per(s.workerHeap, b.workerHeap)} |`,
    );
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
