// Runs every process of the platform as a child, prefixes their output, and stops them all on Ctrl-C.
import { spawn, ChildProcess } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import { embeddedRtpengine } from './rtpengine';

const root = path.resolve(__dirname, '..');
/**
 * Order matters: the SIP server first, so media-app finds it; control-api last, it prints the bootstrap login.
 * media-app runs with --single-threaded-gc: a media worker's garbage collection then never waits for V8's
 * helper threads, which are shared by the process and run at ordinary priority. With them, a real-time or
 * negative-nice worker stalled behind a busy neighbour whenever it collected (priority inversion:
 * docs/benchmarks.md, media legs beside a busy neighbour).
 */
const processes = [
  { name: 'sip-server', entry: 'sip-server/main.ts', nodeArgs: [] as string[] },
  { name: 'media-app', entry: 'media-app/main.ts', nodeArgs: ['--single-threaded-gc'] },
  { name: 'control-api', entry: 'control-api/main.ts', nodeArgs: [] as string[] },
];

const children = new Map<string, ChildProcess>();
let stopping = false;

function prefixLines(name: string, stream: NodeJS.ReadableStream, out: NodeJS.WritableStream): void {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) out.write(`[${name}] ${line}\n`);
  });
}

/**
 * Ctrl-C (SIGINT) stops every process at once. SIGTERM (systemd stop, a deploy) drains first:
 * media-app alone gets SIGTERM and lets its calls finish (up to DRAIN_TIMEOUT_SEC, default 300)
 * while sip-server keeps carrying them; the others are stopped when it has exited.
 */
function stopAll(code: number, drain = false): void {
  if (stopping) return;
  stopping = true;
  const media = children.get('media-app');
  const stopRest = () => {
    for (const child of children.values()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const force = setTimeout(() => {
      for (const child of children.values()) child.kill('SIGKILL');
    }, 10_000);
    force.unref();
  };
  if (drain && media && media.exitCode === null && media.signalCode === null) {
    const bound = (Number(process.env.DRAIN_TIMEOUT_SEC) || 300) + 20;
    process.stdout.write(`[start] draining media-app (live calls finish, at most ${bound - 20} s), then stopping…\n`);
    media.once('exit', stopRest);
    media.kill('SIGTERM');
    setTimeout(() => media.kill('SIGKILL'), bound * 1000).unref();
  } else {
    process.stdout.write('[start] stopping…\n');
    stopRest();
  }
  const wait = setInterval(() => {
    if ([...children.values()].every((c) => c.exitCode !== null || c.signalCode !== null)) {
      clearInterval(wait);
      process.exit(code);
    }
  }, 100);
}

// rtpengine on loopback for SRTP / WebRTC legs (scripts/rtpengine.ts), unless RTPENGINE_NG names an external one;
// its death fails only those legs (media-app says so, /readyz reports it), the platform keeps running
const rtpe = embeddedRtpengine(process.env, process.env.DATA_DIR || path.join(root, '.data'));
if (rtpe) {
  process.env.RTPENGINE_NG = rtpe.ng;
  const child = spawn(rtpe.command, rtpe.args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  children.set('rtpengine', child);
  prefixLines('rtpengine', child.stdout!, process.stdout);
  prefixLines('rtpengine', child.stderr!, process.stderr);
  const gone = (why: string) => {
    children.delete('rtpengine');
    if (!stopping) process.stderr.write(`[start] rtpengine ${why}: SRTP and WebRTC calls fail until it runs (plain SIP calls are not affected)\n`);
  };
  child.on('error', (err) => gone(`did not start (${err.message})`));
  child.on('exit', (code, signal) => gone(`exited (${signal ?? code})`));
}

for (const p of processes) {
  const entry = path.join(root, p.entry);
  if (!fs.existsSync(entry)) {
    process.stdout.write(`[start] ${p.name}: ${p.entry} missing, skipped\n`);
    continue;
  }
  const child = spawn(process.execPath, [...p.nodeArgs, '--require', 'tsx/cjs', entry], { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.set(p.name, child);
  prefixLines(p.name, child.stdout!, process.stdout);
  prefixLines(p.name, child.stderr!, process.stderr);
  child.on('exit', (code, signal) => {
    if (!stopping) {
      process.stderr.write(`[start] ${p.name} exited (${signal ?? code}); stopping the platform\n`);
      stopAll(1);
    }
  });
}

process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0, true));
