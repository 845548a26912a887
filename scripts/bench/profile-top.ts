/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time per function, largest first.
 *   npx tsx scripts/bench/profile-top.ts <file.cpuprofile> [--top 30]
 */
import { frameLabel, numberArg, readProfile } from './cpuprofile';

const top = numberArg('top', 30);
const { p, byId } = readProfile('profile-top.ts <file.cpuprofile> [--top N]');
const self = new Map<string, number>();
let total = 0;
let idle = 0;
for (let i = 0; i < p.samples.length; i++) {
  const n = byId.get(p.samples[i]);
  const dt = p.timeDeltas[i] ?? 0;
  if (!n) continue;
  total += dt;
  if (n.callFrame.functionName === '(idle)') idle += dt;
  const key = frameLabel(n);
  self.set(key, (self.get(key) ?? 0) + dt);
}
const busy = total - idle;
console.log(`wall ${(total / 1000).toFixed(0)} ms, busy ${(busy / 1000).toFixed(0)} ms (${((busy / total) * 100).toFixed(1)} %)`);
for (const [k, v] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${((v / total) * 100).toFixed(1).padStart(5)} % wall  ${((v / Math.max(1, busy)) * 100).toFixed(1).padStart(5)} % busy  ${k}`);
}
