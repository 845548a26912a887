// The early reader (media-engine/worker/leg-early.ts) against a real jitter buffer, tick by tick as a
// leg runs it (sent frame queued, pop, receive), with a canceller that records what it pairs. Frames
// carry their number; sent frames their tick. Through jitter of up to three frames, losses and swaps:
// every frame that came is cleaned once before it is played (a frame played again after the buffer grew
// too), handed on once and in order, and always against the sent frame the same distance back.
// Between ticks (the engine's other phases, `between`): a frame that came whole since the tick goes
// then, and nothing else changes: the same frames, cleaned against the same sent frames, played the same.
import { expect } from 'chai';
import { JitterBuffer } from '../../media-engine/jitter/jitter-buffer';
import { EarlyIn } from '../../media-engine/worker/leg-early';
import type { LegEchoCanceller } from '../../media-engine/worker/leg-aec';
import { seededRandom } from '../../testkit/seeded';

const MAGIC = 12345;

/** frame n: its number in sample 0, a cleaning count in sample 1, a mark in sample 2 */
function numbered(n: number): Int16Array {
  const f = new Int16Array(160);
  f[0] = n;
  f[2] = MAGIC;
  return f;
}

interface Run {
  pairs: { near: number; far: number }[];
  handed: number[];
  /** frame number → when it was handed on (tick · 4 + phase) */
  handedAt: Map<number, number>;
  played: Int16Array[];
}

/**
 * Runs `ticks` ticks; packet n (n ≥ 1) arrives at tick n + delay(n), null: lost. `cancelling`: the
 * canceller ran before the reader was made. `phased`: each tick has three phases more after the leg's
 * own, where the packets arrive (the second) and the reader is served between (`between`), the frame
 * sent at the tick queued at the first of them, as the leg does.
 */
function run(ticks: number, delay: (n: number) => number | null, cancelling = false, ptimeMs = 20, phased = false): Run {
  const jb = new JitterBuffer(1, 8, 2);
  const early = new EarlyIn(8000, cancelling);
  const r: Run = { pairs: [], handed: [], handedAt: new Map(), played: [] };
  const aec = {
    cancel(near: Int16Array | null, far: Int16Array) {
      if (near && near[2] === MAGIC) {
        near[1]!++;
        r.pairs.push({ near: near[0]!, far: far[0]! });
      }
    },
  } as unknown as LegEchoCanceller;
  const arrivals = new Map<number, number[]>();
  for (let n = 1; n <= ticks; n++) {
    const d = delay(n);
    if (d !== null) arrivals.set(n + d, [...(arrivals.get(n + d) ?? []), n]);
  }
  const sent = new Int16Array(160);
  const out = new Int16Array(160);
  /** the frame sent last is not queued yet */
  let sentPending = true;
  const queueSent = () => {
    if (sentPending) early.sent(sent, 8000);
    sentPending = false;
  };
  const hand = (at: number) => (f: Int16Array | null) => {
    if (f && f[2] === MAGIC) (r.handed.push(f[0]!), r.handedAt.set(f[0]!, at));
  };
  const arrive = (tick: number) => {
    for (const n of arrivals.get(tick) ?? []) {
      // 10 ms packets: two a frame, the number in the first (no frame comes whole: all go as played)
      if (ptimeMs === 10) (jb.push(n * 160, numbered(n).subarray(0, 80)), jb.push(n * 160 + 80, new Int16Array(80)));
      else jb.push(n * 160, numbered(n));
    }
  };
  for (let tick = 1; tick <= ticks + 10; tick++) {
    if (!phased) arrive(tick);
    queueSent();
    const hasIn = jb.pop(out);
    early.receive(jb, hasIn, out, 8000, aec, hand(tick * 4));
    if (out[2] === MAGIC) r.played.push(out.slice());
    sent[0] = tick; // the frame sent this tick
    sentPending = true;
    if (!phased) continue;
    for (let phase = 1; phase < 4; phase++) {
      if (phase === 2) arrive(tick);
      queueSent();
      early.between(jb, 8000, aec, hand(tick * 4 + phase));
    }
  }
  return r;
}

describe('media-engine: the early reader against a jitter buffer', () => {
  const check = (r: Run, what: string) => {
    const offsets = new Set(r.pairs.map((p) => p.far - p.near));
    expect([...offsets], `${what}: sent frame minus frame number`).to.have.length(1);
    expect(new Set(r.pairs.map((p) => p.near)).size, `${what}: each frame cleaned once`).to.equal(r.pairs.length);
    expect(
      r.played.filter((f) => f[1] !== 1).map((f) => `${f[0]}×${f[1]}`),
      `${what}: played frames not cleaned exactly once`,
    ).to.deep.equal([]);
    expect(
      r.handed.every((n, i) => i === 0 || n > r.handed[i - 1]!),
      `${what}: handed in order, each once: ${r.handed.join(',')}`,
    ).to.equal(true);
  };

  it('steady packets: each handed the tick it came, against the frame sent the tick before', () => {
    const r = run(200, () => 0);
    check(r, 'steady');
    expect(r.pairs[0]).to.deep.equal({ near: 1, far: 0 });
    expect(r.handed).to.deep.equal(Array.from({ length: 200 }, (_, i) => i + 1));
  });

  for (const seed of [1, 2, 3])
    it(`jitter of up to three frames, 5 % lost, swaps (seed ${seed}): cleaned once, in order, in step`, () => {
      const rnd = seededRandom(seed);
      const r = run(1500, () => (rnd() < 0.05 ? null : Math.floor(rnd() * 4)));
      check(r, `seed ${seed}`);
      expect(r.pairs.length).to.be.above(1300);
    });

  it('a stall, then the frames in a burst; a frame lost: still in step', () => {
    const r = run(200, (n) => (n === 50 ? null : n >= 100 && n < 106 ? 106 - n : 0));
    check(r, 'burst');
    expect(r.handed).to.not.include(50);
  });

  it('10 ms packets, past the buffer giving a frame back after 10 s calm: every frame as played, in step', () => {
    const r = run(1200, () => 0, false, 10);
    check(r, '10 ms');
    // a frame skipped when the buffer gave one back (not handed on, its sent frame taken all the same)
    expect(r.handed.length).to.be.within(1190, 1199);
  });

  it('made while the canceller ran already: the frames waiting are cleaned at once, then in step', () => {
    const r = run(200, () => 0, true);
    check(r, 'fresh');
  });

  it('served between ticks, steady packets: each handed in the phase it came, against the frame sent that tick', () => {
    const r = run(200, () => 0, false, 20, true);
    check(r, 'between');
    expect(r.handed).to.deep.equal(Array.from({ length: 200 }, (_, i) => i + 1));
    // (the first frames wait for the buffer's start, at a tick)
    const late = r.handed.slice(5).filter((n) => r.handedAt.get(n) !== n * 4 + 2);
    expect(late, 'frames not handed in the phase they came').to.deep.equal([]);
  });

  for (const [seed, cancelling] of [
    [4, false],
    [5, false],
    [6, true],
  ] as const)
    it(`served between ticks, jitter, losses and swaps (seed ${seed}${cancelling ? ', made while the canceller ran' : ''}): what the tick alone would do, sooner`, () => {
      const rnd = seededRandom(seed);
      const delays = Array.from({ length: 1501 }, () => (rnd() < 0.05 ? null : Math.floor(rnd() * 4)));
      const phased = run(1500, (n) => delays[n]!, cancelling, 20, true);
      // the same packets read at the next tick (no phases between)
      const ticked = run(1500, (n) => (delays[n] === null ? null : delays[n]! + 1), cancelling);
      check(phased, `seed ${seed}`);
      expect(phased.handed).to.deep.equal(ticked.handed);
      expect(phased.pairs).to.deep.equal(ticked.pairs);
      expect(phased.played.map((f) => f[0])).to.deep.equal(ticked.played.map((f) => f[0]));
      const sooner = phased.handed.filter((n) => phased.handedAt.get(n)! < ticked.handedAt.get(n)!);
      expect(sooner.length, 'frames handed before the next tick').to.be.above(1000);
    });
});
