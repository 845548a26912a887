/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time per function, largest first.
 *   npx tsx scripts/bench/profile-top.ts <file.cpuprofile> [--top 30]
 */
import fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const file = process.argv[2];
if (!file) {
  console.error('usage: profile-top.ts <file.cpuprofile> [--top N]');
  process.exit(2);
}
const ti = process.argv.indexOf('--top');
const top = ti > 0 ? Number(process.argv[ti + 1]) : 30;
const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
let total = 0;
let idle = 0;
for (let i = 0; i < p.samples.length; i++) {
  const n = byId.get(p.samples[i]);
  const dt = p.timeDeltas[i] ?? 0;
  if (!n) continue;
  total += dt;
  const f = n.callFrame;
  if (f.functionName === '(idle)') idle += dt;
  const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(wt\/[^/]+|node_modules)\//, '')}:${f.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + dt);
}
const busy = total - idle;
console.log(`wall ${(total / 1000).toFixed(0)} ms, busy ${(busy / 1000).toFixed(0)} ms (${((busy / total) * 100).toFixed(1)} %)`);
for (const [k, v] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${((v / total) * 100).toFixed(1).padStart(5)} % wall  ${((v / Math.max(1, busy)) * 100).toFixed(1).padStart(5)} % busy  ${k}`);
}
