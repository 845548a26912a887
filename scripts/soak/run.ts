/**
 * Mixed soak of the whole platform (issue 13 item 6): sip-server, media-app and control-api run as
 * processes on a database of their own (`platform_soak` on DATABASE_URL's server) and the Redis of
 * REDIS_URL (own key prefix). For --seconds it drives
 *   sipp calls at --calls-per-second into a number whose flow answers, records, talks and hangs up,
 *   API reads and writes at --api-rps (list and get calls, list recordings, create and delete tags),
 *   WebSocket subscribers on the customer's call events,
 * samples RSS, heap after a collection (scripts/soak/probe.cjs), open file descriptors and bound UDP ports (RTP, SIP) of every process every
 * --sample-seconds, then lets the calls drain, prints the table and PASS/FAIL on flatness: the
 * least-squares slope of each series after the first quarter must stay under its threshold per
 * minute, and the UDP ports bound after the drain must be back to what they were before the load.
 *
 *   source .data/env && npx tsx scripts/soak/run.ts --seconds 240 --calls-per-second 2 --api-rps 10
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { WebSocket } from 'ws';
import { createDb, migrate } from '../../core/db/knex';
import { parseActions } from '../../core/flow';
import { repos } from '../../core/repos';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { RtpSink, sipp, uacWaitsForBye, type SippResult } from '../../testkit/media-app/harness';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { sampleProcess, verdicts, type Sample } from '../../testkit/reliability/sampler';

const ROOT = path.resolve(__dirname, '../..');
const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Proc {
  name: string;
  proc: ChildProcess;
  out: string;
  exited: Promise<number | null>;
}

function start(name: string, script: string, env: Record<string, string>, probeDir: string): Proc {
  // media-app as scripts/start.ts runs it
  const gc = name === 'media-app' ? ['--single-threaded-gc'] : [];
  const proc = spawn(process.execPath, [...gc, '--expose-gc', '--require', 'tsx/cjs', '--require', path.join(__dirname, 'probe.cjs'), script], {
    cwd: ROOT,
    env: { ...process.env, ...env, SOAK_PROBE_DIR: probeDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const p: Proc = { name, proc, out: '', exited: new Promise((r) => proc.on('exit', (code) => r(code))) };
  const keep = (d: Buffer) => (p.out = (p.out + d).slice(-20_000));
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  return p;
}

async function until(fn: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timeout waiting for ${what}`);
    await sleep(200);
  }
}

/** Counters of the load: API requests, 5xx and transport errors; WebSocket events and sockets open. */
interface Stats {
  api: number;
  api5xx: number;
  apiErr: number;
  ws: number;
  wsOpen: number;
}

interface Options {
  seconds: number;
  cps: number;
  apiRps: number;
  sampleSec: number;
  wsClients: number;
  th: { rssMBPerMin: number; heapMBPerMin: number; fdsPerMin: number; udpPerMin: number };
}

function options(): Options {
  return {
    seconds: arg('seconds', 180),
    cps: arg('calls-per-second', 1),
    apiRps: arg('api-rps', 5),
    sampleSec: arg('sample-seconds', 10),
    wsClients: arg('ws', 3),
    th: { rssMBPerMin: arg('rss-mb-per-min', 8), heapMBPerMin: arg('heap-mb-per-min', 4), fdsPerMin: arg('fds-per-min', 3), udpPerMin: arg('udp-per-min', 3) },
  };
}

/** The soak's own database on DATABASE_URL's server, dropped and created afresh, migrated. */
async function soakDatabase(baseUrl: string): Promise<{ db: Knex; dbUrl: string }> {
  const dbName = 'platform_soak';
  const admin = knexFactory({ client: 'pg', connection: baseUrl, pool: { min: 0, max: 1 } });
  await admin.raw('drop database if exists ?? with (force)', [dbName]);
  await admin.raw('create database ??', [dbName]);
  await admin.destroy();
  const u = new URL(baseUrl);
  u.pathname = `/${dbName}`;
  const dbUrl = u.toString();
  const db = createDb(dbUrl);
  await migrate(db);
  return { db, dbUrl };
}

/** sip-server, media-app and control-api as processes (pushed to `procs` as they start); resolves once media-app and control-api are ready. */
async function startProcesses(procs: Proc[], common: Record<string, string>, ports: { sipPort: number; drachtioPort: number; httpPort: number }, probeDir: string): Promise<void> {
  const { sipPort, drachtioPort, httpPort } = ports;
  const secret = randomBytes(8).toString('hex');
  const rtpMin = 40000;
  const drachtio = { DRACHTIO_HOST: '127.0.0.1', DRACHTIO_PORT: String(drachtioPort), DRACHTIO_SECRET: secret };
  procs.push(
    start(
      'sip-server',
      'sip-server/main.ts',
      {
        ...common,
        SIP_LISTEN_HOST: '127.0.0.1',
        SIP_PORT: String(sipPort),
        SIP_TRANSPORTS: 'udp,tcp',
        SIP_ALLOWLIST: '127.0.0.1',
        SIP_UA_BLOCKLIST: 'none-such-agent',
        ...drachtio,
        SIP_SERVER_READY_LINE: '1',
      },
      probeDir,
    ),
    start(
      'media-app',
      'media-app/main.ts',
      { ...common, ...drachtio, MEDIA_APP_NODE_ID: `soak-${process.pid}`, RTP_PORT_MIN: String(rtpMin), RTP_PORT_MAX: String(rtpMin + 1999), MEDIA_APP_READY_LINE: '1' },
      probeDir,
    ),
    start('control-api', 'control-api/main.ts', { ...common, HTTP_HOST: '127.0.0.1', HTTP_PORT: String(httpPort), RATE_LIMIT_SCALE: '0', PUBLIC_URL: `http://127.0.0.1:${httpPort}` }, probeDir),
  );
  await until(() => procs[1]!.out.includes('READY') && procs[2]!.out.includes('listening'), 60_000, `processes ready:\n${procs.map((p) => `${p.name}: ${p.out}`).join('\n')}`);
}

/** The account: customer, accesskey, trunk by address, a number whose flow records and talks. */
async function provision(db: Knex): Promise<{ customerId: string; accesskey: string }> {
  const r = repos(db);
  const customer = await r.customers.create({ email: `soak${process.pid}@example.test`, email_verified: true, status: 'active', name: 'soak' });
  const { token: accesskey } = await r.accesskeys.create({ customer_id: customer.id, name: 'soak' });
  await trunksRepo(db).create(customer.id, 'soak', { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  const flow = await flowsRepo(db).create({
    customer_id: customer.id,
    actions: parseActions([
      { type: 'answer' },
      { type: 'recording_start', option: {} },
      { type: 'talk', option: { text: 'Thank you for calling. This call is recorded for the soak test.', language: 'en-US' } },
      { type: 'recording_stop' },
      { type: 'hangup' },
    ]),
  } as never);
  await numbersRepo(db).create({ customer_id: customer.id, number: '+899000000001', type: 'virtual', call_flow_id: flow.id });
  return { customerId: customer.id, accesskey };
}

/** `n` WebSocket subscribers on the customer's call events, counted in `stats`. */
function subscribers(n: number, httpPort: number, account: { customerId: string; accesskey: string }, stats: Stats): WebSocket[] {
  const sockets: WebSocket[] = [];
  for (let i = 0; i < n; i++) {
    const ws = new WebSocket(`ws://127.0.0.1:${httpPort}/v1.0/ws?accesskey=${account.accesskey}`);
    ws.on('open', () => {
      stats.wsOpen++;
      ws.send(JSON.stringify({ type: 'subscribe', topics: [`customer_id:${account.customerId}:call`] }));
    });
    ws.on('message', () => stats.ws++);
    ws.on('error', () => undefined);
    sockets.push(ws);
  }
  return sockets;
}

/** API reads and writes at `rps` until `stop()` (which resolves once the loop has ended): list and get calls, list recordings, create and delete tags. */
function apiLoad(api: string, accesskey: string, rps: number, stats: Stats): { stop: () => Promise<void> } {
  let stopped = false;
  let lastCall = '';
  const loop = (async () => {
    let i = 0;
    while (!stopped) {
      const started = Date.now();
      const q = `accesskey=${accesskey}`;
      const op = i++ % 5;
      try {
        let res: Response;
        if (op === 0) {
          res = await fetch(`${api}/calls?page_size=10&${q}`);
          const body = (await res.json()) as { result?: { id: string }[] };
          lastCall = body.result?.[0]?.id ?? lastCall;
        } else if (op === 1 && lastCall) res = await fetch(`${api}/calls/${lastCall}?${q}`);
        else if (op === 2) res = await fetch(`${api}/recordings?page_size=10&${q}`);
        else {
          res = await fetch(`${api}/tags?${q}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: `t${i}`, detail: 'soak' }) });
          const tag = (await res.json()) as { id?: string };
          if (tag.id) {
            stats.api++;
            res = await fetch(`${api}/tags/${tag.id}?${q}`, { method: 'DELETE' });
          }
        }
        stats.api++;
        if (res.status >= 500) stats.api5xx++;
        await res.arrayBuffer().catch(() => undefined);
      } catch {
        stats.apiErr++;
      }
      await sleep(Math.max(0, 1000 / rps - (Date.now() - started)));
    }
  })();
  return {
    stop: () => {
      stopped = true;
      return loop;
    },
  };
}

/** What the load did: the calls' and recordings' rows, sipp's count, the API and WebSocket counters. Returns the calls not ended. */
async function printLoad(db: Knex, o: Options, r: { total: number; sipp: SippResult; stats: Stats; rtpPackets: number }): Promise<number> {
  const callRows = (await db('calls').select('status', 'hangup_reason').count('id as n').groupBy('status', 'hangup_reason')) as { status: string; hangup_reason: string; n: number }[];
  const recs = (await db('recordings').select('status').count('id as n').groupBy('status')) as { status: string; n: number }[];
  const okCalls = /Successful call\s*\|[^|]*\|\s*(\d+)/.exec(r.sipp.stdout)?.[1] ?? /(\d+) successful/i.exec(r.sipp.stdout)?.[1] ?? '?';
  console.log(`\nsoak: ${o.seconds} s, ${o.cps} calls/s (${r.total} calls; sipp exit ${r.sipp.code}), ${o.apiRps} API req/s, ${o.wsClients} WebSocket subscribers`);
  console.log(`calls: ${callRows.map((c) => `${c.status}/${c.hangup_reason || '-'} ${c.n}`).join(', ')}; recordings: ${recs.map((x) => `${x.status} ${x.n}`).join(', ')}; sipp successful ${okCalls}`);
  if (r.sipp.code !== 0)
    console.log(
      `sipp errors (first lines):\n${r.sipp.errors
        .split('\n')
        .filter((l) => l.trim())
        .slice(0, 8)
        .join('\n')}`,
    );
  const { stats } = r;
  console.log(
    `API: ${stats.api} requests, ${stats.api5xx} 5xx, ${stats.apiErr} transport errors; WebSocket: ${stats.wsOpen} open, ${stats.ws} events received; RTP packets at the caller: ${r.rtpPackets}\n`,
  );
  return callRows.filter((c) => c.status !== 'hangup').reduce((a, c) => a + Number(c.n), 0);
}

/** The samples' table, and the flatness verdicts: each series' slope over the load, the UDP ports after the drain. Returns whether all passed. */
function printSamples(names: string[], samples: Map<string, Sample[]>, udpBefore: Map<string, number>, th: Options['th']): boolean {
  console.log(['t (s)', ...names.map((n) => `${n} rss MB / heap MB / fds / udp`)].join(' | '));
  const rows = samples.get(names[0]!)!.length;
  for (let i = 0; i < rows; i++) {
    const cells = names.map((n) => {
      const s = samples.get(n)![i];
      return s ? `${s.rssMB.toFixed(1)} / ${s.heapMB.toFixed(1)} / ${s.fds} / ${s.udp}` : '-';
    });
    console.log([samples.get(names[0]!)![i]!.t.toFixed(0), ...cells].join(' | '));
  }
  let pass = true;
  console.log('\nflatness (slope per minute after the first quarter):');
  for (const n of names) {
    const s = samples.get(n)!;
    // the drained samples are not load samples: slopes over the load only
    for (const v of verdicts(n, s.slice(0, -2), th)) {
      pass &&= v.pass;
      console.log(`  ${n.padEnd(12)} ${v.metric.padEnd(6)} ${v.perMin >= 0 ? '+' : ''}${v.perMin.toFixed(2)}/min (limit ${v.limit}) ${v.pass ? 'ok' : 'FAIL'}`);
    }
    const after = s.at(-1)!.udp;
    const released = after <= udpBefore.get(n)! + 2;
    pass &&= released;
    console.log(`  ${n.padEnd(12)} udp ports before ${udpBefore.get(n)} / after the drain ${after} ${released ? 'ok' : 'FAIL (ports not released)'}`);
  }
  return pass;
}

/** The load for `seconds` with the processes sampled every `sampleSec`, then the drain and two samples after it; prints the report and sets the exit code. */
async function soak(o: Options, rig: { db: Knex; procs: Proc[]; probeDir: string; sipPort: number; httpPort: number; account: { customerId: string; accesskey: string } }): Promise<void> {
  const { db, procs, probeDir, sipPort, httpPort, account } = rig;
  const stats: Stats = { api: 0, api5xx: 0, apiErr: 0, ws: 0, wsOpen: 0 };
  const t0 = Date.now();
  const samples = new Map<string, Sample[]>(procs.map((p) => [p.name, []]));
  const sampleAll = () => {
    const t = (Date.now() - t0) / 1000;
    for (const p of procs) {
      const s = sampleProcess(p.proc.pid!, t, probeDir);
      if (s) samples.get(p.name)!.push(s);
    }
  };
  await sleep(1500); // probes written
  sampleAll();
  const udpBefore = new Map(procs.map((p) => [p.name, samples.get(p.name)!.at(-1)?.udp ?? 0]));
  const sockets = subscribers(o.wsClients, httpPort, account, stats);

  // sipp: one run with its own rate
  // one sink for every call of the run
  const sink = await RtpSink.open({ many: true });
  const total = Math.max(1, Math.round(o.seconds * o.cps));
  const calls = sipp(
    uacWaitsForBye(`+899000000001@127.0.0.1:${sipPort}`, '+15553330000', sink.port, { byeTimeoutMs: 60_000 }),
    [
      `127.0.0.1:${sipPort}`,
      '-i',
      '127.0.0.1',
      '-r',
      String(o.cps),
      '-m',
      String(total),
      '-l',
      String(Math.max(10, o.cps * 20)),
      '-mp',
      String(await sippMediaPort()),
      '-timeout',
      `${o.seconds + 90}s`,
    ],
    { killAfterMs: (o.seconds + 100) * 1000 },
  ).done;
  const api = apiLoad(`http://127.0.0.1:${httpPort}/v1.0`, account.accesskey, o.apiRps, stats);

  // sampling through the load
  const sampler = setInterval(sampleAll, o.sampleSec * 1000);
  await sleep(o.seconds * 1000);
  await api.stop();
  const sippResult = await calls;
  // drain: every call ended, the media ports released
  await until(async () => Number((await db('calls').whereNot({ status: 'hangup' }).count({ n: 'id' }))[0]!.n) === 0, 60_000, 'calls drained').catch(() => undefined);
  clearInterval(sampler);
  // two samples after the drain, 3 s and 8 s after it: what is left once the load is gone
  await sleep(3000);
  sampleAll();
  await sleep(5000);
  sampleAll();
  for (const ws of sockets) ws.close();
  sink.close();

  const lost = await printLoad(db, o, { total, sipp: sippResult, stats, rtpPackets: sink.packets });
  let pass = printSamples(
    procs.map((p) => p.name),
    samples,
    udpBefore,
    o.th,
  );
  if (lost) pass = false;
  if (stats.api5xx) pass = false;
  console.log(`\n${pass ? 'PASS' : 'FAIL'}${lost ? ` (${lost} calls not ended)` : ''}${stats.api5xx ? ` (${stats.api5xx} API 5xx)` : ''}`);
  process.exitCode = pass ? 0 : 1;
}

async function main(): Promise<void> {
  const o = options();
  const baseUrl = process.env.DATABASE_URL;
  const redisUrl = process.env.REDIS_URL;
  if (!baseUrl || !redisUrl) throw new Error('DATABASE_URL and REDIS_URL must be set: source .data/env');
  const { db, dbUrl } = await soakDatabase(baseUrl);
  const probeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'soak-probe-'));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'soak-data-'));
  const [sipPort, drachtioPort, httpPort] = [await freePort(), await freePort(), await freePort()];
  const common = { DATABASE_URL: dbUrl, REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `soak${process.pid}:`, DATA_DIR: dataDir, JWT_SECRET: 's'.repeat(40), LOG_LEVEL: 'warn', SIP_DOMAIN: 'sip.soak' };
  const procs: Proc[] = [];
  const stopAll = async () => {
    for (const p of procs) if (p.proc.exitCode === null) p.proc.kill('SIGTERM');
    await Promise.race([Promise.all(procs.map((p) => p.exited)), sleep(12_000)]);
    for (const p of procs) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
  };
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    await startProcesses(procs, common, { sipPort, drachtioPort, httpPort }, probeDir);
    const account = await provision(db);
    await soak(o, { db, procs, probeDir, sipPort, httpPort, account });
  } finally {
    await stopAll();
    await db.destroy();
    fs.rmSync(probeDir, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
