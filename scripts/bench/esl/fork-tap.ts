/**
 * The fsmrf audio tap's delivery (media-app/media-server/fsmrf/fork-tap.ts, issue 55), a few seconds:
 *   npx tsx scripts/bench/esl/fork-tap.ts [--frames 400000] [--rounds 5]
 *
 * What FsmrfFork does per message of the switch's connection: cut it into 20 ms frames and hand each
 * to onFrame as a fresh Int16Array. The messages come from an EventEmitter in the connection's place
 * (the WebSocket's own parsing is the same either way and would hide the delivery's cost), as ws gives
 * them: one Buffer per message. Shapes: `aligned` 320-byte messages (a 20 ms frame each, what our
 * switch sends), `cut` 1000-byte messages (frames across messages, as another switch may cut them),
 * `stereo` 640-byte frames of which the right channel is taken (mix `out`). Per shape: ns per frame,
 * best of --rounds. Same-run baseline: `floor`, a loop that only makes each frame (a fresh Int16Array
 * of 160 samples copied from the message) and calls onFrame, what any delivery must do.
 * Prints the figures and the 1-minute load average.
 */
import { EventEmitter } from 'node:events';
import os from 'node:os';
import type WebSocket from 'ws';
import { FsmrfFork, type ForkLeg } from '../../../media-app/media-server/fsmrf/fork-tap';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const FRAMES = arg('frames', 400_000);
const ROUNDS = arg('rounds', 5);

/** Messages of `size` bytes carrying `frames` frames of `frameBytes` (a few distinct buffers, reused). */
function messages(size: number, frameBytes: number): Buffer[] {
  const count = Math.ceil((FRAMES * frameBytes) / size);
  const pool = Array.from({ length: 8 }, (_, k) => Buffer.alloc(size, k + 1));
  return Array.from({ length: count }, (_, i) => pool[i % pool.length]!);
}

/** ns per frame through an FsmrfFork fed `msgs` on its connection's 'message'. */
function throughFork(mix: 'in' | 'out', msgs: Buffer[]): number {
  let frames = 0;
  let sink = 0;
  const fork = new FsmrfFork(null as unknown as ForkLeg, { mix, onFrame: (f) => void ((sink += f[7]!), frames++) }, 'bench', mix);
  const conn = new EventEmitter();
  fork.attach(conn as unknown as WebSocket);
  const t0 = process.hrtime.bigint();
  for (const m of msgs) conn.emit('message', m, true);
  const ns = Number(process.hrtime.bigint() - t0);
  if (sink === -1) console.log(sink);
  return ns / frames;
}

/** ns per frame of the floor: a fresh Int16Array per frame, copied from the message, to onFrame. */
function floor(msgs: Buffer[]): number {
  let frames = 0;
  let sink = 0;
  const onFrame = (f: Int16Array) => void ((sink += f[7]!), frames++);
  const t0 = process.hrtime.bigint();
  for (const m of msgs) {
    for (let at = 0; at + 320 <= m.length; at += 320) {
      const f = new Int16Array(160);
      new Uint8Array(f.buffer).set(m.subarray(at, at + 320));
      onFrame(f);
    }
  }
  const ns = Number(process.hrtime.bigint() - t0);
  if (sink === -1) console.log(sink);
  return ns / frames;
}

const shapes: [string, () => number][] = [
  ['floor (aligned)', () => floor(messages(320, 320))],
  ['aligned 320 B', () => throughFork('in', messages(320, 320))],
  ['cut 1000 B', () => throughFork('in', messages(1000, 320))],
  ['stereo 640 B', () => throughFork('out', messages(640, 640))],
];
const best = new Map<string, number>();
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, run] of shapes) best.set(name, Math.min(best.get(name) ?? Infinity, run()));
}
const base = best.get('floor (aligned)')!;
for (const [name] of shapes) {
  const ns = best.get(name)!;
  console.log(`${name.padEnd(16)} ${ns.toFixed(1).padStart(7)} ns/frame  (${(ns / base).toFixed(2)}× the floor)`);
}
console.log(`frames ${FRAMES} × ${ROUNDS} rounds, load ${os.loadavg()[0]!.toFixed(2)}, node ${process.version}`);
