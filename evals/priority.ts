/**
 * The evals worker yields the cores to the platform it measures (EVALS_NICE, issue 56: "the simulator
 * must not distort what it measures"). Its simulated callers share the machine with the calls under
 * test and, in production, with real calls: when both want a core at the same instant, the platform's
 * threads go first. A lower priority costs the callers only when the cores are contended, and then
 * their own pacing, never the platform's.
 *
 * On Linux a nice value belongs to a thread, not a process (setpriority(2), NOTES): every thread the
 * process has is lowered (/proc/self/task), and the threads it starts later inherit it, as do its
 * children (espeak-ng, sox). Without /proc, only the calling thread and what it starts.
 */
import fs from 'node:fs';
import os from 'node:os';

export interface Yielded {
  /** the nice value asked for */
  nice: number;
  /** the threads now at it or lower */
  threads: number;
  /** the threads that could not be (ended meanwhile, or refused), each with why */
  failed: string[];
}

/** Lowers every thread of this process to `nice` (0-19; 0 leaves the priority as it is); a thread already lower is left so. */
export function yieldCores(nice: number): Yielded {
  const out: Yielded = { nice, threads: 0, failed: [] };
  if (nice === 0) return out;
  let tids: number[];
  try {
    tids = fs.readdirSync('/proc/self/task').map(Number);
  } catch {
    tids = [0]; // no /proc: the calling thread
  }
  for (const tid of tids) {
    try {
      if (os.getPriority(tid) < nice) os.setPriority(tid, nice);
      out.threads++;
    } catch (err) {
      out.failed.push(`${tid}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return out;
}
