/**
 * The busy neighbour and the responsiveness probe of the media benchmark (`run.ts --neighbour`), both
 * bounded by `durationMs` and both at the default priority:
 *  - busy: a process that only computes (a CPU hog beside the media worker); reports its CPU share;
 *  - probe: a process that wakes every 10 ms (an interactive task) and reports how late it woke, p50/p99.
 * Together they show whether a media worker at a negative nice value keeps its pacing without taking
 * the machine from everything else.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { procStat } from '../../../media-engine/worker/proc-stat';

export interface NeighbourReport {
  /** CPU the busy process got, as a share of one core over the run */
  busyCpuShare: number;
  /** how late the 10 ms probe woke, ms */
  probeLateP50: number;
  probeLateP99: number;
}

const cpuMs = (pid: number): number => procStat(pid).cpuMs;

/** Starts both for `durationMs`; resolves with their figures when they are done. */
export function startNeighbour(durationMs: number): { done: Promise<NeighbourReport>; stop: () => void } {
  const kids: ChildProcess[] = [];
  const execArgv = __filename.endsWith('.ts') ? ['--require', 'tsx/cjs'] : [];
  const busy = fork(__filename, ['busy', String(durationMs)], { execArgv });
  const probe = fork(__filename, ['probe', String(durationMs)], { execArgv });
  kids.push(busy, probe);
  const t0 = performance.now();
  const busyDone = new Promise<number>((resolve) => {
    let last = 0;
    const timer = setInterval(() => {
      try {
        last = cpuMs(busy.pid!);
      } catch {
        /* exited */
      }
    }, 200);
    busy.once('exit', () => {
      clearInterval(timer);
      resolve(last / (performance.now() - t0));
    });
  });
  const probeDone = new Promise<{ p50: number; p99: number }>((resolve) => probe.once('message', (m) => resolve(m as { p50: number; p99: number })));
  const done = Promise.all([busyDone, probeDone]).then(([share, p]) => ({ busyCpuShare: share, probeLateP50: p.p50, probeLateP99: p.p99 }));
  return { done, stop: () => kids.forEach((k) => k.kill()) };
}

if (require.main === module) {
  const [role, ms] = process.argv.slice(2);
  const end = Date.now() + Number(ms);
  if (role === 'busy') {
    let x = 0;
    while (Date.now() < end) for (let i = 0; i < 1e5; i++) x = (x * 31 + i) | 0;
    process.exit(x === 42 ? 1 : 0);
  } else {
    const late: number[] = [];
    let due = performance.now() + 10;
    const tick = () => {
      const now = performance.now();
      late.push(now - due);
      if (Date.now() >= end) {
        late.sort((a, b) => a - b);
        process.send!({ p50: late[Math.floor(late.length * 0.5)] ?? 0, p99: late[Math.floor(late.length * 0.99)] ?? 0 });
        setTimeout(() => process.exit(0), 50);
        return;
      }
      due = now + 10;
      setTimeout(tick, 10);
    };
    setTimeout(tick, 10);
  }
}
