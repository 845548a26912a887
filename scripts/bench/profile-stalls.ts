/**
 * The long ticks of a V8 `.cpuprofile` (from `node --cpu-prof`): each span where the thread ran without
 * an idle sample for at least `--min` ms (its event loop held up that long), with what ran in it: the
 * functions by inclusive and by self time. profile-top.ts sums a whole profile; this reads only the
 * stalls, which a whole profile's sums hide when the loop is idle most of the time.
 *   npx tsx scripts/bench/profile-stalls.ts <file.cpuprofile> [--min 100] [--top 15]
 */
import { frameLabel as label, numberArg as arg, readProfile } from './cpuprofile';

const MIN_MS = arg('min', 100);
const TOP = arg('top', 15);
const { p, byId } = readProfile('profile-stalls.ts <file.cpuprofile> [--min 100] [--top 15]');
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const isIdle = (id: number) => byId.get(id)?.callFrame.functionName === '(idle)';

/** One span of samples with no idle one between them: [first, last) sample indexes, start and end in µs. */
interface Span {
  from: number;
  to: number;
  startUs: number;
  endUs: number;
}

const times: number[] = [];
let t = p.startTime;
for (let i = 0; i < p.samples.length; i++) times.push((t += p.timeDeltas[i] ?? 0));
const spans: Span[] = [];
let open: number | null = null;
for (let i = 0; i <= p.samples.length; i++) {
  const idle = i === p.samples.length || isIdle(p.samples[i]!);
  if (!idle && open === null) open = i;
  if (idle && open !== null) {
    // the span ends when the next (idle) sample was taken: the loop was busy until then
    const endUs = i < times.length ? times[i]! : times[i - 1]!;
    const startUs = open > 0 ? times[open - 1]! : times[open]!;
    if ((endUs - startUs) / 1000 >= MIN_MS) spans.push({ from: open, to: i, startUs, endUs });
    open = null;
  }
}

const fmt = (us: number) => `${(us / 1000).toFixed(0)} ms`;
console.log(`${spans.length} spans of >= ${MIN_MS} ms without an idle sample (profile ${fmt(times[times.length - 1]! - p.startTime)})`);
for (const s of spans) {
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  let maxGap = 0;
  for (let i = s.from; i < s.to; i++) {
    const dt = p.timeDeltas[i + 1] ?? 0;
    maxGap = Math.max(maxGap, dt);
    const leaf = byId.get(p.samples[i]!)!;
    self.set(label(leaf), (self.get(label(leaf)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const k = label(byId.get(id)!);
      if (seen.has(k)) continue; // recursion counted once
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + dt);
    }
  }
  console.log(`\n== at ${fmt(s.startUs - p.startTime)}: ${fmt(s.endUs - s.startUs)} busy, ${s.to - s.from} samples, largest gap between samples ${fmt(maxGap)}`);
  const top = (m: Map<string, number>) =>
    [...m]
      .filter(([k]) => !k.startsWith('(root)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP);
  console.log('  inclusive:');
  for (const [k, v] of top(incl)) console.log(`    ${fmt(v).padStart(8)}  ${k}`);
  console.log('  self:');
  for (const [k, v] of top(self)) console.log(`    ${fmt(v).padStart(8)}  ${k}`);
}
