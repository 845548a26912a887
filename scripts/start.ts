// Runs every process of the platform as a child, prefixes their output, restarts one that exits
// (scripts/supervise.ts: backoff, a crash loop stops the platform) and stops them all on Ctrl-C.
import { spawn, ChildProcess } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import { embeddedRtpengine } from './rtpengine';
import { platformProcesses } from './processes';
import { restartSettingsFromEnv, SupervisorGroup, type ExitVerdict, type RestartSettings } from './supervise';

const root = path.resolve(__dirname, '..');

let settings: RestartSettings;
try {
  settings = restartSettingsFromEnv(process.env);
} catch (e) {
  process.stderr.write(`[start] ${(e as Error).message}\n`);
  process.exit(2);
}
const logDir = path.join(process.env.DATA_DIR || path.join(root, '.data'), 'logs');
let rtpengine: ChildProcess | null = null;
let stopping = false;
/** The last lines of each process's output (over its lives), written to its crash log when it crash-loops. */
const recent = new Map<string, string[]>();

function prefixLines(name: string, stream: NodeJS.ReadableStream, out: NodeJS.WritableStream): void {
  let pending = '';
  const keep = recent.get(name) ?? [];
  recent.set(name, keep);
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      out.write(`[${name}] ${line}\n`);
      keep.push(line);
    }
    if (keep.length > 500) keep.splice(0, keep.length - 500);
  });
}

const log = (line: string) => process.stderr.write(`[start] ${line}\n`);

/** A crash loop: one message naming the process and its log, then the whole platform stops. */
function gaveUp(name: string, verdict: ExitVerdict, last: string): void {
  if (stopping) return;
  let where = `its output above, prefixed [${name}]`;
  try {
    fs.mkdirSync(logDir, { recursive: true });
    const file = path.join(logDir, `${name}-crash.log`);
    fs.writeFileSync(file, `${(recent.get(name) ?? []).join('\n')}\n`);
    where = `${file} (its last ${recent.get(name)?.length ?? 0} lines) or ${where}`;
  } catch {
    // the message still names the process
  }
  log(`${name} exited ${verdict.exitsInWindow} times within ${Math.round(settings.loopWindowMs / 1000)} s (last: ${last}): a crash loop; stopping the platform. See ${where}.`);
  void stopAll(1);
}

const group = new SupervisorGroup({
  settings,
  log,
  onLife: (name, child) => {
    prefixLines(name, child.stdout!, process.stdout);
    prefixLines(name, child.stderr!, process.stderr);
  },
  onGiveUp: gaveUp,
});

/**
 * Ctrl-C (SIGINT) stops every process at once. SIGTERM (systemd stop, a deploy) drains first:
 * media-app alone gets SIGTERM and lets its calls finish (up to DRAIN_TIMEOUT_SEC, default 300)
 * while sip-server keeps carrying them; the others are stopped when it has exited.
 */
async function stopAll(code: number, drain = false): Promise<void> {
  if (stopping) return;
  stopping = true;
  const drainSec = Number(process.env.DRAIN_TIMEOUT_SEC) || 300;
  if (drain && group.members.get('media-app')?.running) process.stdout.write(`[start] draining media-app (live calls finish, at most ${drainSec} s), then stopping…\n`);
  else process.stdout.write('[start] stopping…\n');
  const rtpe = rtpengine;
  const rtpeExited = rtpe ? new Promise((r) => rtpe.once('exit', r)) : null;
  await group.stop(drain ? { drain: 'media-app', drainMs: (drainSec + 20) * 1000 } : {});
  rtpe?.kill('SIGTERM');
  const force = setTimeout(() => rtpe?.kill('SIGKILL'), 10_000);
  await rtpeExited;
  clearTimeout(force);
  process.exit(code);
}

// rtpengine on loopback for SRTP / WebRTC legs (scripts/rtpengine.ts), unless RTPENGINE_NG names an external one;
// its death fails only those legs (media-app says so, /readyz reports it), the platform keeps running
const rtpe = embeddedRtpengine(process.env, process.env.DATA_DIR || path.join(root, '.data'));
if (rtpe) {
  process.env.RTPENGINE_NG = rtpe.ng;
  const child = spawn(rtpe.command, rtpe.args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  rtpengine = child;
  prefixLines('rtpengine', child.stdout!, process.stdout);
  prefixLines('rtpengine', child.stderr!, process.stderr);
  const gone = (why: string) => {
    rtpengine = null;
    if (!stopping) log(`rtpengine ${why}: SRTP and WebRTC calls fail until it runs (plain SIP calls are not affected)`);
  };
  child.on('error', (err) => gone(`did not start (${err.message})`));
  child.on('exit', (code, signal) => gone(`exited (${signal ?? code})`));
}

// the platform's three, and the switch's two when ESL_LISTEN is set (scripts/processes.ts)
let processes: ReturnType<typeof platformProcesses>;
try {
  processes = platformProcesses(process.env);
} catch (e) {
  process.stderr.write(`[start] ${(e as Error).message}\n`);
  process.exit(2);
}
for (const p of processes) {
  const entry = path.join(root, p.entry);
  if (!fs.existsSync(entry)) {
    process.stdout.write(`[start] ${p.name}: ${p.entry} missing, skipped\n`);
    continue;
  }
  const env = { ...process.env, ...p.env };
  group.add(p.name, () => spawn(process.execPath, [...p.nodeArgs, '--require', 'tsx/cjs', entry], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] }));
}

process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0, true));
