/**
 * SIP call-rate benchmark: sipp uac -> sip-server (child process) -> a minimal drachtio-srf UAS
 * (answer, then the caller's BYE), against a baseline measured in the same run: sipp uac directly
 * against sipp uas.
 *
 *   npx tsx scripts/bench/sip/run.ts [--steps 100,200,300,400,500,600] [--seconds 5] [--cpu-rate 300]
 *     [--cpu-seconds 10] [--cpu-warmup 35] (seconds at --cpu-rate before the measured run, past Timer J/L; 0: none)
 *   BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/p" (node options of the sip-server process),
 *   BENCH_SERVER_STDOUT=/tmp/server.log (its stdout kept, e.g. with --trace-deopt),
 *   BENCH_SERVER_ENTRY=path/to/bundle.js (run that JavaScript instead of sip-server/main.ts under tsx)
 *
 * Output: a table per target rate (calls attempted / ok / failed, achieved calls per second) for
 * both set-ups, the highest rate with zero failed calls, their ratio, and sip-server CPU per call
 * (process.cpuUsage() of the sip-server process, read over a fixed-rate run) with its memory at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import DrachtioSrf from 'drachtio-srf';
import { freePort } from '../../../testkit/ports';

const Srf: any = DrachtioSrf; // driven untyped, as in test/sip-server/drachtio/harness.ts

const ROOT = path.resolve(__dirname, '../../..');
const SECRET = 'bench-secret';
const SDP = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : def;
}
const STEPS = arg('steps', '100,200,300,400,500,600').split(',').map(Number);
const SECONDS = Number(arg('seconds', '5'));
const CPU_RATE = Number(arg('cpu-rate', '300'));
const CPU_SECONDS = Number(arg('cpu-seconds', '10'));
// the measured run follows one at the same rate, measured apart: a fresh process spends ~40 % of its
// first seconds at 300 cps in TurboFan compiles (V8's background threads count in the process's CPU)
/** 35 s by default: past the 32 s of Timer J and L, so the transactions' clean-up (and its GC) is in the figure */
const CPU_WARMUP = Number(arg('cpu-warmup', '35'));

/** process.memoryUsage() of the sip-server process, bytes */
interface ServerMemory {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

/** the sip-server's SIP capture counters (null when SIP_CAPTURE=off) */
interface CaptureStats {
  captured: number;
  written: number;
  dropped: number;
  writeErrors: number;
}

interface RunResult {
  rate: number;
  attempted: number;
  ok: number;
  failed: number;
  seconds: number;
  exit: number | null;
}

const children = new Set<ChildProcess>();
function cleanup(): void {
  for (const c of children) c.kill('SIGKILL');
}
process.on('exit', cleanup);
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});

function runSipp(args: string[], killAfterMs: number): Promise<{ code: number | null; out: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sipp-bench-'));
  return new Promise((resolve) => {
    const p = spawn('sipp', [...args, '-nostdin'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(p);
    let out = '';
    p.stdout?.on('data', (d) => {
      out += d;
    });
    p.stderr?.on('data', (d) => {
      out += d;
    });
    const t = setTimeout(() => p.kill('SIGKILL'), killAfterMs);
    p.on('exit', (code) => {
      clearTimeout(t);
      children.delete(p);
      fs.rmSync(dir, { recursive: true, force: true });
      resolve({ code, out });
    });
  });
}

function counter(out: string, label: string): number {
  const m = new RegExp(`${label}\\s*\\|\\s*\\d+\\s*\\|\\s*(\\d+)`).exec(out);
  return m ? Number(m[1]) : 0;
}

async function uacRun(target: string, rate: number, seconds: number): Promise<RunResult> {
  const calls = rate * seconds;
  const port = await freePort();
  const t0 = Date.now();
  const { code, out } = await runSipp(
    [
      '-sn',
      'uac',
      target,
      '-i',
      '127.0.0.1',
      '-p',
      String(port),
      '-r',
      String(rate),
      '-m',
      String(calls),
      '-l',
      String(Math.max(50, rate * 2)),
      '-timeout',
      `${seconds + 20}s`,
      '-timeout_error',
      '-recv_timeout',
      '5000',
    ],
    (seconds + 30) * 1000,
  );
  const elapsed = (Date.now() - t0) / 1000;
  const ok = counter(out, 'Successful call');
  const failed = counter(out, 'Failed call');
  return { rate, attempted: calls, ok, failed: failed + Math.max(0, calls - ok - failed), seconds: elapsed, exit: code };
}

async function startSipServer(): Promise<{
  proc: ChildProcess;
  sipPort: number;
  drachtioPort: number;
  cpu(): Promise<{ user: number; system: number; memory?: ServerMemory; capture?: CaptureStats }>;
}> {
  const sipPort = await freePort();
  const drachtioPort = await freePort();
  const extra = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean); // e.g. --cpu-prof
  const entry = process.env.BENCH_SERVER_ENTRY ? [path.resolve(process.env.BENCH_SERVER_ENTRY)] : ['-r', 'tsx/cjs', path.join(ROOT, 'sip-server/main.ts')];
  const proc = spawn(process.execPath, [...extra, ...entry], {
    cwd: ROOT,
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      SIP_LISTEN_HOST: '127.0.0.1',
      SIP_PORT: String(sipPort),
      SIP_TRANSPORTS: 'udp',
      DRACHTIO_HOST: '127.0.0.1',
      DRACHTIO_PORT: String(drachtioPort),
      DRACHTIO_SECRET: SECRET,
      SIP_ALLOWLIST: '127.0.0.1',
      SIP_MAX_SERVER_TRANSACTIONS: '100000',
      SIP_SERVER_READY_LINE: '1',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(proc);
  let buf = '';
  const waiters: ((line: string) => void)[] = [];
  // e.g. BENCH_NODE_ARGS="--trace-deopt" BENCH_SERVER_STDOUT=/tmp/deopt.log: the server's stdout kept in a file
  const keep = process.env.BENCH_SERVER_STDOUT ? fs.createWriteStream(process.env.BENCH_SERVER_STDOUT) : null;
  proc.stdout?.on('data', (d) => {
    keep?.write(d);
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      for (const w of waiters.splice(0)) w(line);
    }
  });
  const nextLine = (prefix: string) =>
    new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`sip-server did not print ${prefix}`)), 20000);
      const w = (line: string) => {
        if (line.startsWith(prefix)) {
          clearTimeout(t);
          resolve(line);
        } else waiters.push(w);
      };
      waiters.push(w);
    });
  await nextLine('READY');
  return {
    proc,
    sipPort,
    drachtioPort,
    async cpu() {
      const p = nextLine('CPU');
      proc.kill('SIGUSR2');
      const j = JSON.parse((await p).slice(4));
      return { user: j.user / 1000, system: j.system / 1000, memory: j.memory, capture: j.capture }; // ms
    },
  };
}

function connectApp(port: number): Promise<any> {
  const srf = new Srf();
  srf.invite((req: any, res: any) => {
    srf.createUAS(req, res, { localSdp: SDP }).catch(() => undefined);
  });
  return new Promise((resolve, reject) => {
    srf.connect({ host: '127.0.0.1', port, secret: SECRET });
    srf.on('connect', (err: Error | null) => (err ? reject(err) : resolve(srf)));
    srf.on('error', () => undefined);
  });
}

async function ramp(label: string, target: string): Promise<RunResult[]> {
  const results: RunResult[] = [];
  for (const rate of STEPS) {
    const r = await uacRun(target, rate, SECONDS);
    results.push(r);
    process.stderr.write(`${label} ${rate} cps: ok ${r.ok} failed ${r.failed} in ${r.seconds.toFixed(1)} s\n`);
    // one failing step may be noise on a shared machine; two in a row end the ramp
    if (r.failed > 0 && results.length > 1 && results[results.length - 2].failed > 0) break;
    await new Promise((res) => setTimeout(res, 1000));
  }
  return results;
}

function best(results: RunResult[]): number {
  return results.filter((r) => r.failed === 0).reduce((m, r) => Math.max(m, r.rate), 0);
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

type ServerUsage = Awaited<ReturnType<Awaited<ReturnType<typeof startSipServer>>['cpu']>>;
interface CpuRun {
  warm: { ok: number; failed: number; perCall: number } | null;
  fixed: { ok: number; failed: number };
  cpu0: ServerUsage;
  cpu1: ServerUsage;
  cpuPerCall: number;
  userPerCall: number;
  appPerCall: number;
}

/** sip-server's CPU per call at a fixed rate: first while the JIT warms up, then warm; and this process's (the srf app's). */
async function measureCpu(server: Awaited<ReturnType<typeof startSipServer>>): Promise<CpuRun> {
  const perCall = (a: { user: number; system: number }, b: { user: number; system: number }, calls: number) => (calls ? (b.user + b.system - a.user - a.system) / calls : NaN);
  let warm: { ok: number; failed: number; perCall: number } | null = null;
  if (CPU_WARMUP > 0) {
    await new Promise((r) => setTimeout(r, 1000));
    const w0 = await server.cpu();
    const w = await uacRun(`127.0.0.1:${server.sipPort}`, CPU_RATE, CPU_WARMUP);
    await new Promise((r) => setTimeout(r, 500));
    warm = { ok: w.ok, failed: w.failed, perCall: perCall(w0, await server.cpu(), w.ok) };
  }
  await new Promise((r) => setTimeout(r, 1000));
  const cpu0 = await server.cpu();
  const app0 = process.cpuUsage();
  const fixed = await uacRun(`127.0.0.1:${server.sipPort}`, CPU_RATE, CPU_SECONDS);
  await new Promise((r) => setTimeout(r, 500));
  const cpu1 = await server.cpu();
  const appUsage = process.cpuUsage(app0);
  const cpuPerCall = perCall(cpu0, cpu1, fixed.ok);
  const userPerCall = fixed.ok ? (cpu1.user - cpu0.user) / fixed.ok : NaN;
  // the srf application runs in this process (besides the light sipp orchestration)
  const appPerCall = fixed.ok ? (appUsage.user + appUsage.system) / 1000 / fixed.ok : NaN;
  return { warm, fixed, cpu0, cpu1, cpuPerCall, userPerCall, appPerCall };
}

/** The two ramps side by side, and the best rates without failures. */
function printRamps(baseline: RunResult[], ours: RunResult[]): void {
  const rows = [['offered cps', 'baseline ok/failed', 'baseline done/s', 'sip-server ok/failed', 'sip-server done/s']];
  for (const rate of STEPS) {
    const b = baseline.find((r) => r.rate === rate);
    const o = ours.find((r) => r.rate === rate);
    if (!b && !o) continue;
    rows.push([String(rate), b ? `${b.ok}/${b.failed}` : '-', b ? (b.ok / b.seconds).toFixed(0) : '-', o ? `${o.ok}/${o.failed}` : '-', o ? (o.ok / o.seconds).toFixed(0) : '-']);
  }
  const bb = best(baseline);
  const bo = best(ours);
  process.stdout.write(
    `\nSIP call-rate benchmark (${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)}, ${SECONDS} s per step, INVITE/200/ACK/BYE/200; the sipp uas adds a 180, sip-server a 100 to an INVITE unanswered after 200 ms)\n`,
  );
  process.stdout.write('done/s = calls completed / wall time of the sipp run (start to last BYE answered): the sustained rate when below the offered one\n\n');
  process.stdout.write(`${table(rows)}\n\n`);
  const doneRate = (rs: RunResult[]) => rs.filter((r) => r.failed === 0).reduce((m, r) => Math.max(m, r.ok / r.seconds), 0);
  const db = doneRate(baseline);
  const dd = doneRate(ours);
  process.stdout.write(`highest offered rate with zero failed calls: baseline ${bb} cps, sip-server ${bo} cps (steps stop at ${STEPS[STEPS.length - 1]})\n`);
  process.stdout.write(`best sustained completion rate without failures: baseline ${db.toFixed(0)}/s, sip-server ${dd.toFixed(0)}/s (ratio ${(db ? dd / db : 0).toFixed(2)})\n`);
}

/** CPU per call (warm-up and warm), SIP capture's count, sip-server's memory, the app's CPU for comparison. */
function printCpu({ warm, fixed, cpu0, cpu1, cpuPerCall, userPerCall, appPerCall }: CpuRun): void {
  if (warm)
    process.stdout.write(
      `sip-server CPU per call in the first ${CPU_WARMUP} s at ${CPU_RATE} cps (JIT warm-up, not the figure): ${warm.perCall.toFixed(3)} ms (${warm.ok} ok, ${warm.failed} failed)\n`,
    );
  process.stdout.write(
    `sip-server CPU per call at ${CPU_RATE} cps for ${CPU_SECONDS} s${warm ? ' (after the warm-up)' : ''}: ${cpuPerCall.toFixed(3)} ms, of which user ${userPerCall.toFixed(3)} ms (${fixed.ok} ok, ${fixed.failed} failed; target <= 1 ms)\n`,
  );
  // the production default captures every call's SIP to Redis: a figure without it says so
  const cap = cpu1.capture;
  if (!cap) process.stdout.write('SIP capture: off (SIP_CAPTURE=off)\n');
  else {
    const written = cap.written - (cpu0.capture?.written ?? 0);
    const lost = cap.dropped + cap.writeErrors - (cpu0.capture?.dropped ?? 0) - (cpu0.capture?.writeErrors ?? 0);
    process.stdout.write(
      `SIP capture to Redis in that run: ${written} messages written, ${lost} dropped or failed${lost ? ' (WARNING: is Redis at REDIS_URL up? the figure is then not the production one)' : ''}\n`,
    );
  }
  const mem = cpu1.memory;
  const mb = (b: number) => (b / 1048576).toFixed(0);
  if (mem)
    process.stdout.write(
      `sip-server memory at the end of that run (every call of the last 32 s is still held by its transactions): rss ${mb(mem.rss)} MB, JS heap used ${mb(mem.heapUsed)} MB, array buffers ${mb(mem.arrayBuffers)} MB\n`,
    );
  process.stdout.write(
    `drachtio-srf application CPU per call (same run, for comparison): ${appPerCall.toFixed(3)} ms (sip-server/app ratio ${(cpuPerCall / appPerCall).toFixed(2)}; load average ${os.loadavg()[0].toFixed(1)})\n`,
  );
}

async function main(): Promise<void> {
  // baseline: sipp uac -> sipp uas
  const uasPort = await freePort();
  const uas = spawn('sipp', ['-sn', 'uas', '-i', '127.0.0.1', '-p', String(uasPort), '-nostdin'], { stdio: 'ignore', cwd: os.tmpdir() });
  children.add(uas);
  await new Promise((r) => setTimeout(r, 500));
  const baseline = process.argv.includes('--no-baseline') ? [] : await ramp('baseline sipp->sipp', `127.0.0.1:${uasPort}`);
  uas.kill('SIGKILL');

  // sip-server + srf app
  const server = await startSipServer();
  const app = await connectApp(server.drachtioPort);
  await uacRun(`127.0.0.1:${server.sipPort}`, 50, 2); // warm-up (JIT)
  const ours = await ramp('sip-server+srf', `127.0.0.1:${server.sipPort}`);

  const cpu = await measureCpu(server);

  app.disconnect();
  const exited = new Promise((r) => server.proc.once('exit', r));
  server.proc.kill('SIGTERM');
  // a --cpu-prof profile is written at exit, which takes seconds for a long run
  const exitWait = (process.env.BENCH_NODE_ARGS ?? '').includes('--cpu-prof') ? 60000 : 5000;
  await Promise.race([exited, new Promise((r) => setTimeout(r, exitWait))]);

  printRamps(baseline, ours);
  printCpu(cpu);
  cleanup();
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  cleanup();
  process.exit(1);
});
