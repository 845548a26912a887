/**
 * One line of /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat (proc(5)), read for what this project
 * uses: CPU time, nice value and scheduling policy of a process or of one of its threads. Linux only.
 */
import fs from 'node:fs';

/** USER_HZ: the unit of utime/stime (100 on every Linux architecture Node runs on) */
const TICK_MS = 10;

export interface ProcStat {
  /** utime + stime, ms */
  cpuMs: number;
  nice: number;
  /** SCHED_* number: 0 other, 1 FIFO, 2 RR, 3 batch, 5 idle */
  policy: number;
  rtPriority: number;
}

/** `pid` alone: the whole process; with `tid`: that thread only. Throws when it is gone. */
export function procStat(pid: number, tid?: number): ProcStat {
  const stat = fs.readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  // after "(comm) " (comm may hold spaces and parentheses): field N of proc(5) is at index N - 3
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { cpuMs: (Number(f[11]) + Number(f[12])) * TICK_MS, nice: Number(f[16]), rtPriority: Number(f[37]), policy: Number(f[38]) };
}
