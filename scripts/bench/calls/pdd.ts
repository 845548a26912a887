/**
 * Post-dial delay as a user sees it: REST `POST /v1.0/calls` → the INVITE arriving at the far end.
 * control-api (control-api/main.ts in its own process, as deployed), sip-server and media-app
 * (startPlatform, in this process) on loopback, sharing one Postgres database and Redis prefix;
 * the far end is a small UDP UAS here that timestamps each INVITE and answers 486 at once (the answer
 * is not part of the delay). Baseline in the same run: a bare drachtio-srf createUAC through the same
 * sip-server to the same UAS (the signalling path alone, no API, database, queue or media).
 *
 *   source .data/env && npx tsx scripts/bench/calls/pdd.ts [--calls 200] [--rate 25]
 * (BENCH_API_NODE_ARGS adds node flags to control-api, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p")
 *
 * Reported per call: api = POST sent → response received (validation, rows, enqueue); dial = response
 * → INVITE at the UAS (BullMQ delivery, claim, endpoint, INVITE through sip-server); pdd = the sum.
 */
process.env.LOG_LEVEL ??= 'silent';
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import os from 'node:os';
import { buildTestApp, createFixture } from '../../../testkit/api';
import { freePort } from '../../../testkit/ports';
import { startPlatform, type Platform } from '../../../testkit/media-app/harness';
import { testDatabaseUrl } from '../../../testkit/db';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const CALLS = arg('calls', 200);
const RATE = arg('rate', 25);
if (!(CALLS > 0 && CALLS <= 5000 && RATE > 0 && RATE <= 500)) {
  console.error('usage: pdd.ts [--calls 1..5000] [--rate 1..500]');
  process.exit(2);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const SDP = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 9 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n';

/** A UAS that notes when each INVITE arrives (by Request-URI user) and rejects it with 486. */
class TimingUas {
  readonly arrivals = new Map<string, number>();
  private sock = dgram.createSocket('udp4');
  port = 0;
  async open(): Promise<void> {
    await new Promise<void>((r) => this.sock.bind(0, '127.0.0.1', r));
    this.port = this.sock.address().port;
    this.sock.on('message', (buf, rinfo) => {
      const t = performance.now();
      const raw = buf.toString();
      const m = /^INVITE sip:([^@\s]+)@/.exec(raw);
      if (!m) return; // ACK of the 486, and anything else
      if (!this.arrivals.has(m[1]!)) this.arrivals.set(m[1]!, t);
      const lines = raw.split('\r\n');
      const keep = lines.filter((l) => /^(Via|From|Call-ID|CSeq|v|f|i):/i.test(l));
      const to = lines.find((l) => /^(To|t):/i.test(l)) ?? 'To: <sip:x@127.0.0.1>';
      const reply = ['SIP/2.0 486 Busy Here', ...keep, /;tag=/.test(to) ? to : `${to};tag=uas${m[1]}`, 'Content-Length: 0', '', ''].join('\r\n');
      this.sock.send(reply, rinfo.port, rinfo.address);
    });
  }
  close(): void {
    this.sock.close();
  }
}

function post(port: number, path: string, body: unknown): Promise<{ status: number; text: string }> {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent: keepAlive, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(data);
  });
}
/** CPU seconds (user + system) of a process so far, from /proc (clock ticks of 10 ms). */
function cpuSeconds(pid: number | undefined): number {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 32 });

/** control-api in its own process (as deployed), on `port`, once it says it listens. */
async function startApi(port: number, redisKeyPrefix: string, jwtSecret: string, dataDir: string): Promise<ChildProcess> {
  const server = spawn(process.execPath, [...(process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean), '--import', 'tsx', 'control-api/main.ts'], {
    cwd: path.resolve(__dirname, '../../..'),
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      DATABASE_URL: await testDatabaseUrl(),
      REDIS_URL: process.env.TEST_REDIS_URL,
      REDIS_KEY_PREFIX: redisKeyPrefix,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(port),
      RATE_LIMIT_SCALE: '0',
      LOG_LEVEL: 'warn',
      JWT_SECRET: jwtSecret,
      DATA_DIR: dataDir,
    },
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`control-api did not start: ${out}`)), 60_000);
    server.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (/listening on/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    server.once('exit', (code) => reject(new Error(`control-api exited ${code}: ${out}`)));
  });
  return server;
}

/** The baseline: a bare createUAC from media-app's srf → the INVITE at the UAS, ms. */
async function bareBaseline(p: Platform, uas: TimingUas): Promise<number[]> {
  const bare: number[] = [];
  for (let i = 0; i < Math.min(CALLS, 200); i++) {
    const user = `bare${i}`;
    const t0 = performance.now();
    await p.app.srf.createUAC(`sip:${user}@127.0.0.1:${uas.port}`, { localSdp: SDP }).catch(() => undefined); // 486
    const at = uas.arrivals.get(user);
    if (at !== undefined) bare.push(at - t0);
    await sleep(1000 / RATE);
  }
  return bare;
}

/** The post-dial delay's segments against the baseline, and the CPU per call. */
function printSegments(x: { bare: number[]; api: number[]; dial: number[]; pdd: number[] }, run: { failed: number; missing: number; apiCpuMs: number; selfCpuMs: number }): void {
  const { bare, api, dial, pdd } = x;
  const { failed, missing, apiCpuMs, selfCpuMs } = run;
  const f1 = (x: number) => x.toFixed(1);
  const row = (name: string, xs: number[]) => `| ${name} | ${xs.length} | ${f1(pct(xs, 50))} | ${f1(pct(xs, 90))} | ${f1(pct(xs, 99))} | ${f1(Math.max(...xs))} |`;
  console.log(
    `\nload average at end ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}; failed POSTs ${failed}; INVITEs missing ${missing}`,
  );
  console.log('| segment | n | p50 ms | p90 ms | p99 ms | max ms |');
  console.log('|---|---:|---:|---:|---:|---:|');
  console.log(row('baseline: bare createUAC → INVITE at UAS', bare));
  console.log(row('api: POST /calls → 201', api));
  console.log(row('dial: 201 → INVITE at UAS', dial));
  console.log(row('**post-dial delay: POST → INVITE**', pdd));
  console.log(`\nCPU per call: control-api ${apiCpuMs.toFixed(1)} ms (POST, its events and webhooks), sip-server + media-app + this bench ${selfCpuMs.toFixed(1)} ms`);
  console.log(`pdd p50 / baseline p50 = ${(pct(pdd, 50) / pct(bare, 50)).toFixed(1)}; target p99 < 100 ms: ${pct(pdd, 99) < 100 ? 'met' : 'NOT met'}`);
}

async function main(): Promise<void> {
  const p = await startPlatform({ RTP_PORT_MIN: '44000', RTP_PORT_MAX: '45999', MEDIA_WORKERS: '1' });
  const t = await buildTestApp({ env: { REDIS_KEY_PREFIX: p.config.redisKeyPrefix, RATE_LIMIT_SCALE: '0' } });
  const f = await createFixture(t.ctx);
  const apiPort = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-pdd-'));
  const server = await startApi(apiPort, p.config.redisKeyPrefix, t.ctx.config.jwtSecret, dataDir);
  const uas = new TimingUas();
  await uas.open();
  try {
    console.log(
      `machine: ${os.cpus().length} cores, load ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}; ${CALLS} calls at ${RATE}/s`,
    );
    // 1. baseline: bare createUAC → INVITE at the UAS
    const bare = await bareBaseline(p, uas);
    // 2. POST /calls at RATE
    const api: number[] = [];
    const dial: number[] = [];
    const pdd: number[] = [];
    const sentAt = new Map<string, { t0: number; t1: number }>();
    let failed = 0;
    const apiCpu0 = cpuSeconds(server.pid);
    const selfCpu0 = cpuSeconds(process.pid);
    const t0 = performance.now();
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < CALLS; i++) {
      const due = t0 + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const user = `pdd${i}`;
      inflight.push(
        (async () => {
          const s = performance.now();
          const r = await post(apiPort, `/v1.0/calls?accesskey=${f.accesskey}`, {
            source: { type: 'sip', target: 'bench@example.test' },
            destinations: [{ type: 'sip', target: `sip:${user}@127.0.0.1:${uas.port}` }],
            actions: [{ type: 'hangup' }],
          });
          if (r.status >= 300) {
            if (failed++ === 0) console.error(`POST /calls: ${r.status} ${r.text}`);
            return;
          }
          sentAt.set(user, { t0: s, t1: performance.now() });
        })(),
      );
    }
    await Promise.all(inflight);
    const end = performance.now() + 10_000;
    while (uas.arrivals.size < CALLS + bare.length && performance.now() < end) await sleep(100);
    const apiCpuMs = ((cpuSeconds(server.pid) - apiCpu0) * 1000) / CALLS;
    const selfCpuMs = ((cpuSeconds(process.pid) - selfCpu0) * 1000) / CALLS;
    for (const [user, s] of sentAt) {
      const at = uas.arrivals.get(user);
      if (at === undefined) continue;
      api.push(s.t1 - s.t0);
      dial.push(at - s.t1);
      pdd.push(at - s.t0);
    }
    printSegments({ bare, api, dial, pdd }, { failed, missing: sentAt.size - pdd.length, apiCpuMs, selfCpuMs });
  } finally {
    await sleep(2000); // let the hangups and events settle
    uas.close();
    server.kill('SIGTERM');
    fs.rmSync(dataDir, { recursive: true, force: true });
    await t.close();
    await p.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
