/**
 * Per-process resource samples for the soaks (scripts/soak/run.ts, testkit/reliability/soak.ts; Linux /proc): RSS, heap (from scripts/soak/probe.cjs),
 * open file descriptors and bound UDP ports (RTP, SIP), and the flatness verdict: the least-squares
 * slope of each series after a warm-up, against a threshold per minute.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface Sample {
  t: number; // seconds since start
  rssMB: number;
  heapMB: number;
  /** when the probe measured heapMB (ms since the epoch; NaN without one) */
  heapAt: number;
  fds: number;
  udp: number;
}

/** inode → local port of every UDP socket on the machine (IPv4 and IPv6). */
function udpInodes(): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of ['/proc/net/udp', '/proc/net/udp6']) {
    let text = '';
    try {
      text = fs.readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      out.set(cols[9]!, parseInt(cols[1]!.split(':')[1]!, 16));
    }
  }
  return out;
}

export function sampleProcess(pid: number, t: number, probeDir: string): Sample | null {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null; // gone
  }
  const rssKB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  let heapMB = NaN;
  let heapAt = NaN;
  try {
    const probe = JSON.parse(fs.readFileSync(path.join(probeDir, `${pid}.json`), 'utf8')) as { heapUsed: number; at: number };
    heapMB = probe.heapUsed / 1048576;
    heapAt = probe.at;
  } catch {
    /* probe not written yet */
  }
  const udp = udpInodes();
  let fds = 0;
  let udpCount = 0;
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    fds++;
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m && udp.has(m[1]!)) udpCount++;
    } catch {
      /* closed meanwhile */
    }
  }
  return { t, rssMB: rssKB / 1024, heapMB, heapAt, fds, udp: udpCount };
}

/** Least-squares slope of y over x (per unit of x). */
export function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

export interface Thresholds {
  rssMBPerMin: number;
  heapMBPerMin: number;
  fdsPerMin: number;
  udpPerMin: number;
}

export interface Verdict {
  name: string;
  metric: keyof Omit<Sample, 't' | 'heapAt'>;
  perMin: number;
  limit: number;
  pass: boolean;
}

/** Flatness of each series over the samples after the warm-up share (default: the first quarter dropped). */
export function verdicts(name: string, samples: Sample[], th: Thresholds, warmupShare = 0.25): Verdict[] {
  const s = samples.slice(Math.floor(samples.length * warmupShare));
  const xs = s.map((x) => x.t / 60);
  const limits: [keyof Omit<Sample, 't' | 'heapAt'>, number][] = [
    ['rssMB', th.rssMBPerMin],
    ['heapMB', th.heapMBPerMin],
    ['fds', th.fdsPerMin],
    ['udp', th.udpPerMin],
  ];
  return limits.map(([metric, limit]) => {
    const pts = s.filter((x) => Number.isFinite(x[metric]));
    const perMin = slope(
      pts.map((x) => x.t / 60),
      pts.map((x) => x[metric]),
    );
    void xs;
    return { name, metric, perMin, limit, pass: perMin <= limit };
  });
}
