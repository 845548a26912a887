/**
 * Is there a per-AI-call leak in media-app (issue 52's soak)? The platform's processes (with
 * scripts/soak/probe.cjs and --expose-gc: heap after a forced collection every 2 s) and the soak's
 * stand-in of OpenAI's Realtime API (testkit/reliability/soak-ai.ts); --batches batches of --calls AI
 * calls (ai_talk, the caller speaks once and hangs up after --hold seconds), sequential; media-app's
 * live heap (the least of three probe readings once the batch's calls ended) before and after each.
 * With --snapshots, media-app writes a heap snapshot (SIGUSR2) before the first batch and after the last.
 *
 * --kind talk: the same batches of plain calls (a talk flow) instead, to tell the AI path's cost from the
 * call's. Each batch line also gives media-app's RSS (and its anonymous part), the main thread's external
 * and ArrayBuffer bytes, and with --threads each worker thread's heap after a collection (the media
 * engine's workers, the VAD's; scripts/soak/probe.cjs with SOAK_PROBE_THREADS=1).
 *
 *   source .data/env && NODE_ENV=test npx tsx scripts/soak/ai-heap.ts [--batches 3] [--calls 20] [--hold 8] [--kind ai|talk] [--threads] [--snapshots]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repos } from '../../core/repos';
import { trunksRepo } from '../../core/repos/trunks';
import { testDb, testDatabaseUrl } from '../../testkit/db';
import { sippCalls, uacWaitsForBye } from '../../testkit/media-app/harness';
import { AI_NUMBER, AiPhone, apiPost, createAiNumber, speechUlaw, startAiStandIn } from '../../testkit/reliability/soak-ai';
import { startPlatformProcesses, type Supervised } from '../../testkit/reliability/supervised';
import { numberArg as arg, runMain } from './cli';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const MB = (b: number) => (b / 1048576).toFixed(2);

interface ProbeReading {
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  at: number;
}

/** media-app's heap after a collection: the least of three fresh probe readings. */
async function liveHeap(probeDir: string, media: Supervised): Promise<number> {
  const xs: number[] = [];
  let at = 0;
  while (xs.length < 3) {
    await sleep(500);
    const r = JSON.parse(fs.readFileSync(path.join(probeDir, `${media.pid}.json`), 'utf8')) as ProbeReading;
    if (r.at !== at) xs.push(r.heapUsed);
    at = r.at;
  }
  return Math.min(...xs);
}

/** A kB figure of /proc/<pid>/status (VmRSS, RssAnon, RssFile …) in MB. */
function procStatus(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Everything else of media-app's memory at one moment: RSS (anonymous part), the main thread's external and ArrayBuffer bytes, each worker thread's heap (with --threads). */
function memoryLine(probeDir: string, media: Supervised): string {
  const pid = media.pid!;
  const main = JSON.parse(fs.readFileSync(path.join(probeDir, `${pid}.json`), 'utf8')) as ProbeReading;
  const threads = fs
    .readdirSync(probeDir)
    .filter((f) => f.startsWith(`${pid}-t`) && f.endsWith('.json'))
    .sort()
    .map((f) => {
      const r = JSON.parse(fs.readFileSync(path.join(probeDir, f), 'utf8')) as ProbeReading;
      return `${f.slice(String(pid).length + 1, -5)} ${MB(r.heapUsed)}/${MB(r.external)}`;
    });
  const parts = [`rss ${procStatus(pid, 'VmRSS').toFixed(1)} (anon ${procStatus(pid, 'RssAnon').toFixed(1)})`, `main external ${MB(main.external)} arrayBuffers ${MB(main.arrayBuffers)}`];
  if (threads.length) parts.push(`threads heap/external ${threads.join(', ')}`);
  return parts.join('; ');
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

const TALK_NUMBER = '+899200000009';

/** A number whose flow answers and talks for longer than a call lasts (the TTS cache serves it after the first call). */
async function createTalkNumber(apiUrl: string, accesskey: string): Promise<void> {
  const post = apiPost(apiUrl, accesskey);
  const talk = { type: 'talk', option: { text: 'This line is kept busy with a long announcement. '.repeat(20), language: 'en-US' } };
  const flow = await post('flows', { name: 'talk', actions: [{ type: 'answer' }, talk] });
  await post('numbers', { number: TALK_NUMBER, call_flow_id: flow.id });
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
  const threads = process.argv.includes('--threads');
  const kindAt = process.argv.indexOf('--kind');
  const kind = kindAt > 0 ? process.argv[kindAt + 1] : 'ai';
  if (kind !== 'ai' && kind !== 'talk') throw new Error(`--kind ai|talk, not ${kind}`);
  const probeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-heap-probe-'));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-heap-data-'));
  const stand = await startAiStandIn();
  const pp = await startPlatformProcesses({
    databaseUrl: await testDatabaseUrl(),
    redisUrl: process.env.TEST_REDIS_URL!,
    dataDir,
    nodeArgs: ['--expose-gc', ...(snapshots ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${probeDir}`] : [])],
    preload: [path.join(__dirname, 'probe.cjs')],
    env: { SIP_DIGEST_ALGORITHMS: 'MD5', SOAK_PROBE_DIR: probeDir, ...(threads ? { SOAK_PROBE_THREADS: '1' } : {}), ...stand.env },
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
    const key = await accessKey();
    if (kind === 'ai') await createAiNumber(pp.apiUrl, key, stand.rt, 120);
    else await createTalkNumber(pp.apiUrl, key);
    const speech = speechUlaw('I would like to check my order, please.');
    const target = `127.0.0.1:${pp.sipPort}`;
    // one warm-up call: first-use allocations (module code, caches) are not a per-call cost
    const one = async (n: number) => {
      const phones = await Promise.all(Array.from({ length: n }, () => AiPhone.open(speech, 8000)));
      try {
        const scenario = uacWaitsForBye(`${kind === 'ai' ? AI_NUMBER : TALK_NUMBER}@${target}`, 'aiheap', '[field0]', { hangUpAfterMs: holdS * 1000 });
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
    console.log(`media-app heap after gc before batch 1: ${MB(h)} MB; ${memoryLine(probeDir, media)}`);
    await snap('before');
    const first = h;
    for (let b = 1; b <= batches; b++) {
      const res = await one(calls);
      await sleep(5000); // the sessions' teardown
      const h2 = await heap();
      console.log(
        `batch ${b}: ${calls} ${kind} calls (sipp ${res.code}, heard ${res.heard}); heap ${MB(h)} → ${MB(h2)} MB (${((h2 - h) / 1024 / calls).toFixed(1)} KB/call); ${memoryLine(probeDir, media)}`,
      );
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
