/**
 * Real-time scheduling for one media worker thread, with a watchdog (MediaServerOptions.workerRealtime).
 *
 * The thread runs SCHED_RR at the given priority, so its 20 ms clock wakes on time even beside a busy
 * neighbour on the same CPU. A real-time thread that stops sleeping would starve that CPU, so the API
 * thread samples the worker thread's CPU time (/proc/<pid>/task/<tid>/stat) every `windowMs`: above
 * `maxCpuShare` of a core for `overrunWindows` windows in a row it drops the thread back to
 * SCHED_OTHER (keeping its nice value), and puts it back on real time only after `cooldownMs` below
 * half that share. The check runs outside the
 * worker, so it holds when the worker's own code is what runs away. Linux only; chrt (util-linux)
 * changes the policy; without the right (CAP_SYS_NICE or RLIMIT_RTPRIO) the worker stays as it was
 * and a change with reason 'error' says why.
 */
import { execFile } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { procStat } from './proc-stat';

export interface WorkerRealtimeOptions {
  /** SCHED_RR priority, 1..99 (low numbers are enough: nothing else on the host runs real-time) */
  priority: number;
  /** share of one core above which the watchdog drops the thread back (default 0.8) */
  maxCpuShare?: number;
  /** sampling window of the watchdog, ms (default 1000) */
  windowMs?: number;
  /** windows in a row over the limit before the drop (default 3: a burst such as setting up many legs at once is not an overrun) */
  overrunWindows?: number;
  /** time on SCHED_OTHER after a drop before real time is tried again, ms (default 30000) */
  cooldownMs?: number;
}

export type SchedulePolicy = 'rr' | 'other';

export interface ScheduleChange {
  /** worker index */
  index: number;
  tid: number;
  policy: SchedulePolicy;
  /** start: put on real time; overrun: dropped by the watchdog; cooled: back on real time after the cool-down; error: chrt failed */
  reason: 'start' | 'overrun' | 'cooled' | 'error';
  /** the thread's share of one core in the window that decided it */
  cpuShare?: number;
  message?: string;
}

function chrt(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('chrt', args, { timeout: 5000 }, (err, _out, stderr) => (err ? reject(new Error(String(stderr).trim() || err.message)) : resolve()));
  });
}

export class RealtimeGuard extends EventEmitter<{ change: [ScheduleChange] }> {
  private policy: SchedulePolicy = 'other';
  private timer: NodeJS.Timeout | null = null;
  private last = { at: 0, cpuMs: 0 };
  private droppedAt = 0;
  private over = 0;
  private busy = false;
  /** why the last change was refused, if it was */
  refused: string | undefined;
  private readonly maxShare: number;
  private readonly windowMs: number;
  private readonly cooldownMs: number;

  constructor(
    readonly index: number,
    readonly tid: number,
    private readonly o: WorkerRealtimeOptions,
  ) {
    super();
    this.maxShare = o.maxCpuShare ?? 0.8;
    this.windowMs = o.windowMs ?? 1000;
    this.cooldownMs = o.cooldownMs ?? 30_000;
  }

  get current(): SchedulePolicy {
    return this.policy;
  }

  async start(): Promise<void> {
    await this.set('rr', 'start');
    if (this.policy !== 'rr') return; // refused: the worker stays as it is, unwatched
    this.last = { at: performance.now(), cpuMs: procStat(process.pid, this.tid).cpuMs };
    this.timer = setInterval(() => void this.check(), this.windowMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async check(): Promise<void> {
    if (this.busy) return;
    let cpuMs: number;
    try {
      cpuMs = procStat(process.pid, this.tid).cpuMs;
    } catch {
      return this.stop(); // the thread is gone
    }
    const at = performance.now();
    const share = (cpuMs - this.last.cpuMs) / Math.max(1, at - this.last.at);
    this.last = { at, cpuMs };
    this.over = share > this.maxShare ? this.over + 1 : 0;
    if (this.policy === 'rr' && this.over >= (this.o.overrunWindows ?? 3)) {
      this.droppedAt = at;
      this.over = 0;
      await this.set('other', 'overrun', share);
    } else if (this.policy === 'other' && at - this.droppedAt >= this.cooldownMs && share < this.maxShare / 2) {
      await this.set('rr', 'cooled', share);
    }
  }

  private async set(policy: SchedulePolicy, reason: ScheduleChange['reason'], cpuShare?: number): Promise<void> {
    this.busy = true;
    try {
      const tid = String(this.tid);
      await chrt(policy === 'rr' ? ['-r', '-p', String(this.o.priority), tid] : ['-o', '-p', '0', tid]);
      this.policy = policy;
      this.refused = undefined;
      this.emit('change', { index: this.index, tid: this.tid, policy, reason, cpuShare });
    } catch (e) {
      // a refused later change is tried again at the next window
      this.refused = (e as Error).message;
      this.emit('change', { index: this.index, tid: this.tid, policy: this.policy, reason: 'error', cpuShare, message: (e as Error).message });
    } finally {
      this.busy = false;
    }
  }
}
