/**
 * Is there a per-AI-call leak in media-app (issue 52's soak)? The platform's processes (with
 * scripts/soak/probe.cjs and --expose-gc: heap after a forced collection every 2 s) and the soak's
 * stand-in of OpenAI's Realtime API (testkit/reliability/soak-ai.ts); --batches batches of --calls AI
 * calls (ai_talk, the caller speaks once and hangs up after --hold seconds), sequential; media-app's
 * live heap (the least of three probe readings once the batch's calls ended) before and after each.
 * With --snapshots, media-app writes a heap snapshot (SIGUSR2) before the first batch and after the last.
 *
 *   source .data/env && NODE_ENV=test npx tsx scripts/soak/ai-heap.ts [--batches 3] [--calls 20] [--hold 8] [--snapshots]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repos } from '../../core/repos';
import { trunksRepo } from '../../core/repos/trunks';
import { testDb, testDatabaseUrl } from '../../testkit/db';
import { sippCalls, uacWaitsForBye } from '../../testkit/media-app/harness';
import { AI_NUMBER, AiPhone, createAiNumber, speechUlaw, startAiStandIn } from '../../testkit/reliability/soak-ai';
import { startPlatformProcesses, type Supervised } from '../../testkit/reliability/supervised';
import { numberArg as arg, runMain } from './cli';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const MB = (b: number) => (b / 1048576).toFixed(2);

/** media-app's heap after a collection: the least of three fresh probe readings. */
async function liveHeap(probeDir: string, media: Supervised): Promise<number> {
  const xs: number[] = [];
  let at = 0;
  while (xs.length < 3) {
    await sleep(500);
    const r = JSON.parse(fs.readFileSync(path.join(probeDir, `${media.pid}.json`), 'utf8')) as { heapUsed: number; at: number };
    if (r.at !== at) xs.push(r.heapUsed);
    at = r.at;
  }
  return Math.min(...xs);
}

/** A heap snapshot of media-app (--heapsnapshot-signal), once written. */
async function snapshot(probeDir: string, media: Supervised, what: string): Promise<void> {
  const before = new Set(fs.readdirSync(probeDir));
  media.kill('SIGUSR2');
  for (let i = 0; i < 120; i++) {
    await sleep(1000);
    const f = fs.readdirSync(probeDir).find((x) => x.endsWith('.heapsnapshot') && !before.has(x));
    if (f && fs.statSync(path.join(probeDir, f)).size > 0) {
      await sleep(3000);
      console.log(`snapshot ${what}: ${path.join(probeDir, f)}`);
      return;
    }
  }
}

/** A customer with a trunk by address; its access key. */
async function accessKey(): Promise<string> {
  const db = await testDb();
  const r = repos(db);
  const customer = await r.customers.create({ email: `aiheap${process.pid}@example.test`, email_verified: true, status: 'active', name: 'aiheap' });
  const { token } = await r.accesskeys.create({ customer_id: customer.id, name: 'aiheap' });
  await trunksRepo(db).create(customer.id, `aiheap${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  return token;
}

async function main(): Promise<void> {
  const [batches, calls, holdS] = [arg('batches', 3), arg('calls', 20), arg('hold', 8)];
  const snapshots = process.argv.includes('--snapshots');
  const probeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-heap-probe-'));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-heap-data-'));
  const stand = await startAiStandIn();
  const pp = await startPlatformProcesses({
    databaseUrl: await testDatabaseUrl(),
    redisUrl: process.env.TEST_REDIS_URL!,
    dataDir,
    nodeArgs: ['--expose-gc', ...(snapshots ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${probeDir}`] : [])],
    preload: [path.join(__dirname, 'probe.cjs')],
    env: { SIP_DIGEST_ALGORITHMS: 'MD5', SOAK_PROBE_DIR: probeDir, ...stand.env },
  });
  const media = pp.procs['media-app'];
  // the first run's output (Supervised keeps only the current run's): why it ended, if it did
  let firstRun = '';
  const keep = (d: Buffer) => (firstRun = (firstRun + d).slice(-8000));
  media.proc!.stdout!.on('data', keep);
  media.proc!.stderr!.on('data', keep);
  const heap = () => liveHeap(probeDir, media);
  const snap = (what: string) => (snapshots ? snapshot(probeDir, media, what) : Promise.resolve());
  try {
    await createAiNumber(pp.apiUrl, await accessKey(), stand.rt, 120);
    const speech = speechUlaw('I would like to check my order, please.');
    const target = `127.0.0.1:${pp.sipPort}`;
    // one warm-up call: first-use allocations (module code, caches) are not a per-call cost
    const one = async (n: number) => {
      const phones = await Promise.all(Array.from({ length: n }, () => AiPhone.open(speech, 8000)));
      try {
        const scenario = uacWaitsForBye(`${AI_NUMBER}@${target}`, 'aiheap', '[field0]', { hangUpAfterMs: holdS * 1000 });
        const res = await sippCalls(
          scenario,
          target,
          phones.map((p) => [p.port]),
          { timeoutMs: holdS * 1000 + 40_000, rate: 5 },
        ).done;
        return { code: res.code, heard: phones.filter((p) => p.heard()).length };
      } finally {
        for (const p of phones) p.close();
      }
    };
    console.log('warm-up', await one(2));
    await sleep(5000);
    let h = await heap();
    console.log(`media-app heap after gc before batch 1: ${MB(h)} MB`);
    await snap('before');
    const first = h;
    for (let b = 1; b <= batches; b++) {
      const res = await one(calls);
      await sleep(5000); // the sessions' teardown
      const h2 = await heap();
      console.log(`batch ${b}: ${calls} calls (sipp ${res.code}, heard ${res.heard}); heap ${MB(h)} → ${MB(h2)} MB (${((h2 - h) / 1024 / calls).toFixed(1)} KB/call)`);
      h = h2;
      // a restart makes the figures meaningless: say so, with what the process printed
      if (media.runs > 1) throw new Error(`media-app restarted (${media.runs} runs); its first run printed:\n${firstRun}`);
    }
    console.log(`total: ${MB(first)} → ${MB(h)} MB over ${batches * calls} calls (${((h - first) / 1024 / (batches * calls)).toFixed(1)} KB/call); stand-in turns ${stand.rt.speechStartedAt.length}`);
    await snap('after');
  } finally {
    await pp.stop();
    await stand.rt.close();
  }
}

runMain(main);
