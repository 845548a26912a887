/**
 * The evals benchmark's processes (run.ts) and where their CPU went. Three rooms, as in production: the
 * platform under measurement (this process: sip-server, media-app and its media worker thread), the
 * vendors' stand-ins (stand-ins.ts) and the simulated callers (the evals worker, evals/main.ts), so
 * that neither the callers' RTP pacing nor the stand-ins' recognition runs on the agent's event loop.
 * CPU is read from /proc (Linux): each process's own time and its ended children's (pocketsphinx,
 * espeak-ng, sox), and this process's main thread apart from its other threads.
 */
import { endProcess } from '../../../testkit/child-process';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

const TICK_MS = 10; // CLK_TCK is 100 on Linux

/** utime + stime (and cutime + cstime: its waited-for children) of a /proc stat line, in ms. */
function statMs(file: string): { own: number; children: number } {
  try {
    const line = fs.readFileSync(file, 'utf8');
    const f = line.slice(line.lastIndexOf(')') + 2).split(' ');
    // after "pid (comm) ": state is field 3, utime 14, stime 15, cutime 16, cstime 17
    const n = (i: number) => Number(f[i - 3]) * TICK_MS;
    return { own: n(14) + n(15), children: n(16) + n(17) };
  } catch {
    return { own: 0, children: 0 }; // the process is gone: counted up to its last sample
  }
}

/** CPU ms of each part of the benchmark so far. */
export interface CpuSample {
  /** this process's main thread: sip-server, media-app's calls and ai_talk, the bench's bookkeeping */
  platformMain: number;
  /** this process's other threads: the media worker thread (RTP), V8's and libuv's */
  platformThreads: number;
  /** this process's ended children: the recognisers (pocketsphinx), the local voices */
  platformChildren: number;
  /** each vendor's stand-in process, by its part (llm, stt, tts) */
  standIns: Record<string, number>;
  /** the simulated callers' process (the evals worker) with its ended children (espeak-ng, sox) */
  callers: number;
  /** every core's busy time on the machine (/proc/stat): the bench's and everything else's */
  machineBusy: number;
  /** ms the platform's threads (all of them), the stand-ins' and the callers' were runnable but waited for a core (schedstat) */
  waited: { platform: number; simulator: number };
}

/** ms the threads of process `pid` ('self' for this one) spent runnable, waiting for a core (/proc/<pid>/task/<tid>/schedstat, 2nd field, ns). */
function runQueueMs(pid: number | string | undefined): number {
  if (pid === undefined) return 0;
  try {
    return fs.readdirSync(`/proc/${pid}/task`).reduce((sum, tid) => {
      try {
        return sum + Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
      } catch {
        return sum; // the thread ended
      }
    }, 0);
  } catch {
    return 0; // the process is gone
  }
}

/** The machine's busy CPU ms over all cores (/proc/stat's first line: user, nice, system, irq, softirq, steal). */
function machineBusyMs(): number {
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return [0, 1, 2, 5, 6, 7].reduce((sum, i) => sum + (f[i] ?? 0), 0) * TICK_MS;
  } catch {
    return 0;
  }
}

/** `callers` null: the evals worker runs in this process (its CPU is the platform's main thread's). */
export function sampleCpu(standIns: { part: string; child: ChildProcess }[], callers: ChildProcess | null): CpuSample {
  const self = statMs('/proc/self/stat');
  const main = statMs(`/proc/self/task/${process.pid}/stat`).own;
  const of = (c: ChildProcess | null) => {
    if (!c) return 0;
    const s = statMs(`/proc/${c.pid}/stat`);
    return s.own + s.children;
  };
  return {
    platformMain: main,
    platformThreads: self.own - main,
    platformChildren: self.children,
    standIns: Object.fromEntries(standIns.map((s) => [s.part, of(s.child)])),
    callers: of(callers),
    machineBusy: machineBusyMs(),
    waited: { platform: runQueueMs('self'), simulator: [...standIns.map((x) => x.child), callers].reduce((sum, c) => sum + (c ? runQueueMs(c.pid) : 0), 0) },
  };
}

/**
 * Each part's share of one core between two samples `wallMs` apart, and the simulator's (the stand-ins
 * and the callers) against the platform's: the simulator must not take the cores the agent under test needs.
 */
export function cpuShares(a: CpuSample, b: CpuSample, wallMs: number): string {
  const share = (ms: number) => `${Math.round((ms / wallMs) * 100)} %`;
  const d = (k: 'platformMain' | 'platformThreads' | 'platformChildren' | 'callers') => b[k] - a[k];
  const parts = Object.keys(b.standIns).map((p) => [p, b.standIns[p]! - (a.standIns[p] ?? 0)] as const);
  const standIns = parts.reduce((sum, [, ms]) => sum + ms, 0);
  const platform = d('platformMain') + d('platformThreads') + d('platformChildren');
  const simulator = standIns + d('callers');
  const others = b.machineBusy - a.machineBusy - platform - simulator;
  return (
    `platform main thread ${share(d('platformMain'))}, its other threads ${share(d('platformThreads'))}, its child processes ${share(d('platformChildren'))}; ` +
    `stand-ins ${parts.map(([p, ms]) => `${p} ${share(ms)}`).join(', ')}; simulated callers ${share(d('callers'))} (of one core); ` +
    `simulator ${share(simulator)} against the platform's ${share(platform)}; the machine's other work ${share(others)} (of ${os.cpus().length} cores); ` +
    `waited for a core (runnable, not running): the platform's threads ${Math.round(((b.waited.platform - a.waited.platform) / wallMs) * 1000)} ms a second, the simulator's ${Math.round(((b.waited.simulator - a.waited.simulator) / wallMs) * 1000)} ms a second`
  );
}

/**
 * The platform's event-loop delay over a run (the agent's timers and I/O wait this long for the loop),
 * and when in the run its longest holds fell (a 10 ms timer's lateness, each over 100 ms, as seconds
 * since the run's start): the calls' start, their greeting or their question.
 */
export function loopDelay(): { stop(): string } {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const t0 = performance.now();
  const stalls: { at: number; ms: number }[] = [];
  let last = t0;
  const timer = setInterval(() => {
    const now = performance.now();
    const late = now - last - 10;
    if (late > 100) stalls.push({ at: (last - t0) / 1000, ms: late });
    last = now;
  }, 10);
  return {
    stop() {
      clearInterval(timer);
      h.disable();
      const ms = (ns: number) => (ns / 1e6).toFixed(0);
      const worst = stalls
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 5)
        .map((s) => `${s.ms.toFixed(0)} ms at +${s.at.toFixed(1)} s`);
      return `p50 ${ms(h.percentile(50))} ms, p99 ${ms(h.percentile(99))} ms, max ${ms(h.max)} ms (longest: ${worst.join(', ') || 'none over 100 ms'})`;
    },
  };
}

const ROOT = path.resolve(__dirname, '../../..');

/** `script` (a path from the repository root) run by this Node with tsx; `readStdout`: its stdout is for the caller to read (else it goes to ours, as its stderr does). */
export function tsxChild(script: string, args: string[], env: NodeJS.ProcessEnv, readStdout: boolean): ChildProcess {
  // BENCH_CHILD_NODE_ARGS: node flags for the children (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`)
  const nodeArgs = (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(ROOT, script), ...args], { cwd: ROOT, env, stdio: ['pipe', readStdout ? 'pipe' : 'inherit', 'inherit'] });
  child.on('error', (e) => console.error(`${script}: ${e.message}`));
  child.stdin!.on('error', () => undefined);
  return child;
}

/** The first line `child` prints, parsed; rejects if it exits first or prints nothing within `ms`. */
export function firstLine<T>(child: ChildProcess, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => done(new Error(`no line from the child within ${ms} ms`)), ms);
    const onData = (d: Buffer) => {
      buf += d.toString();
      const nl = buf.indexOf('\n');
      if (nl >= 0) done(null, buf.slice(0, nl));
    };
    const onExit = (code: number | null) => done(new Error(`the child exited (${code}) before its first line`));
    const done = (err: Error | null, line?: string) => {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(JSON.parse(line!) as T);
    };
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });
}

/** Writes `line` to `child`'s stdin and returns the child, for firstLine to read its answer. */
export function askLine(child: ChildProcess, line: string): ChildProcess {
  child.stdin!.write(line + '\n');
  return child;
}

/** Ends `child` (its stdin closed, then SIGTERM) and waits for its exit, SIGKILL after `ms` (testkit's endProcess). */
export function endChild(child: ChildProcess, ms = 15_000): Promise<void> {
  return endProcess(
    child,
    (c) => {
      c.stdin?.end();
      c.kill('SIGTERM');
    },
    ms,
  );
}
