/**
 * The voice loop's echo guard (media-app/ai/echo-guard.ts) per 20 ms frame of a call, on media-app's
 * main thread: one far20 (what the call sent) and one near20 (the caller) a frame, in three phases of
 * an agent call: the agent talking with its echo back (a speakerphone), the caller talking after the
 * agent fell silent (the question), both at once. Each phase is 30 s of audio run through a fresh
 * guard, several rounds; the figure is the fastest round's µs a frame. The checksum of what the guard
 * passed on (which frames were silenced) shows that a faster guard decides the same.
 *
 *   npx tsx scripts/bench/ai/echo-guard.ts [--rounds 5]
 */
import { EchoGuard } from '../../../media-app/ai/echo-guard';

const ri = process.argv.indexOf('--rounds');
const ROUNDS = ri > 0 ? Number(process.argv[ri + 1]) : 5;
const FRAMES = 1500; // 30 s
const N = 160;
const LAG = 120 / 20; // the echo's path: 120 ms, in frames

let seed = 7;
const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff) * 2 - 1;

/** Speech-like audio: a voiced tone under a syllable envelope (4 a second), silent when `on` is false. */
function voice(k: number, on: boolean, pitch: number): Int16Array {
  const f = new Int16Array(N);
  if (!on) return f;
  const env = Math.max(0, Math.sin((Math.PI * k) / 12.5));
  for (let i = 0; i < N; i++) f[i] = Math.round(4000 * env * (0.7 * Math.sin((2 * Math.PI * pitch * (k * N + i)) / 8000) + 0.3 * rnd()));
  return f;
}

type Phase = { name: string; agent: (k: number) => boolean; caller: (k: number) => boolean };
const PHASES: Phase[] = [
  { name: 'agent talking, its echo back', agent: () => true, caller: () => false },
  { name: 'caller talking, agent silent', agent: (k) => k < 100, caller: (k) => k >= 200 },
  { name: 'both talking', agent: () => true, caller: () => true },
];

function run(p: Phase): { ms: number; sum: number } {
  seed = 7;
  const far = Array.from({ length: FRAMES }, (_, k) => voice(k, p.agent(k), 180));
  const near = far.map((_, k) => {
    const mine = voice(k, p.caller(k), 240);
    const echo = k >= LAG ? far[k - LAG]! : new Int16Array(N);
    return Int16Array.from(mine, (v, i) => Math.max(-32768, Math.min(32767, v + Math.round(0.3 * echo[i]!))));
  });
  const g = new EchoGuard(8000);
  let sum = 0;
  const t = process.hrtime.bigint();
  for (let k = 0; k < FRAMES; k++) {
    g.far20(far[k]!);
    for (const o of g.near20(near[k]!)) sum = (sum * 31 + (o[0] ?? 0) + o.length) % 1_000_000_007;
  }
  return { ms: Number(process.hrtime.bigint() - t) / 1e6, sum };
}

console.log(`echo guard, µs a 20 ms frame (far20 + near20), fastest of ${ROUNDS} rounds of ${FRAMES} frames`);
for (const p of PHASES) {
  let best = Infinity;
  let sum = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const x = run(p);
    best = Math.min(best, x.ms);
    sum = x.sum;
  }
  console.log(`${p.name.padEnd(32)} ${((best * 1000) / FRAMES).toFixed(1).padStart(7)} µs  (50 calls: ${(((best * 1000 * 50) / FRAMES / 20e3) * 100).toFixed(1)} % of one core; checksum ${sum})`);
}
