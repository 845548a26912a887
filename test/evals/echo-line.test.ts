// The echo background's delay line (evals/background.ts EchoLine) on explicit times: the "platform" sends a
// packet every 20 ms (RTP timestamps 160 apart, across the 32-bit wrap), each sample marked by its index on
// that stream; the phone sends a frame every 20 ms on its own phase. Both are read by one simulated event
// loop: a stall holds everything due in it until it ends, then the phone's timer catches up first (several
// frames at once) and the packets read in the stall come after, in a burst, all stamped with the stall's
// end; the phone's timer fires a few ms late at random; the network delays some packets. Each sample a frame
// echoes must be the one the platform sent exactly delay_ms (plus the network's least transit) before that
// sample of the frame, in time: never an earlier or later one, whatever the loop did; a sample is left out
// only when the packet holding it had not been read yet when the frame went. A stream that stays later than
// that for half a second (a longer path from now on) is placed anew where it comes.
import { expect } from 'chai';
import { EchoLine } from '../../evals/background';

const FRAME = 160;
/** the network's least transit (ms): a whole number of samples, so the expected sample is exact */
const TRANSIT = 0.25;
/** the phone's frames are due this far (ms) after the platform's packets: two clocks, not one */
const PHASE = 7;

interface Loop {
  /** [start, length] ms: nothing runs in it; what came due is run at its end, the phone's timer first */
  stalls?: [number, number][];
  /** how late (ms) the phone's timer fires for frame k (a 10 ms interval timer on a busy loop) */
  timerLate?: (k: number) => number;
  /** extra network delay (ms) of packet n */
  netLate?: (n: number) => number;
  /** the platform's first RTP timestamp */
  ts0?: number;
}

interface Sent {
  due: number;
  pcm: Int16Array;
  /** the index of the last heard sample read before this frame was mixed */
  readUpTo: number;
}

/** Runs `packets` platform packets and as many phone frames through `line` on the simulated loop. */
function simulate(line: EchoLine, packets: number, o: Loop = {}): Sent[] {
  const ran = (t: number) => (o.stalls ?? []).reduce((at, [s, len]) => (at >= s && at < s + len ? s + len : at), t);
  type Ev = { at: number; order: number; run: () => void };
  const events: Ev[] = [];
  let readUpTo = -1;
  const sent: Sent[] = [];
  for (let n = 0; n < packets; n++) {
    const arrives = 20 * n + TRANSIT + (o.netLate?.(n) ?? 0);
    const at = ran(arrives);
    events.push({
      at,
      order: 1,
      run: () => {
        line.heard(
          Int16Array.from({ length: FRAME }, (_, i) => ((n * FRAME + i) % 30_000) + 1),
          ((o.ts0 ?? 0) + n * FRAME) >>> 0,
          0x1234,
          at,
        );
        readUpTo = n * FRAME + FRAME - 1;
      },
    });
  }
  for (let k = 0; k < packets; k++) {
    const due = 20 * k + PHASE;
    events.push({
      at: ran(due + (o.timerLate?.(k) ?? 0)),
      order: 0,
      run: () => {
        const pcm = new Int16Array(FRAME);
        line.mix(pcm, due);
        sent.push({ due, pcm, readUpTo });
      },
    });
  }
  // the loop: by time; at one time the timers phase (the phone's frames) before the poll phase (packets)
  events.sort((a, b) => a.at - b.at || a.order - b.order);
  for (const e of events) e.run();
  return sent.sort((a, b) => a.due - b.due);
}

/** Checks every sample of every frame against the platform's sample sent `delayMs` before it; returns how many were echoed and left out. */
function expectOnTime(sent: Sent[], delayMs: number): { echoed: number; missed: number } {
  let echoed = 0;
  let missed = 0;
  for (const f of sent) {
    for (let i = 0; i < FRAME; i++) {
      // the sample the platform sent delay_ms before this one (it reached the phone TRANSIT later)
      const s = Math.round((f.due - delayMs - TRANSIT) * 8) + i;
      const v = f.pcm[i]!;
      if (s < 0) {
        expect(v, `frame due ${f.due} ms, sample ${i}: before the platform's first`).to.equal(0);
        continue;
      }
      if (v === 0) {
        expect(s, `frame due ${f.due} ms, sample ${i}: left out though heard before the frame went`).to.be.above(f.readUpTo);
        missed++;
        continue;
      }
      expect(v - 1, `frame due ${f.due} ms, sample ${i}: which platform sample it echoes`).to.equal(s % 30_000);
      echoed++;
    }
  }
  return { echoed, missed };
}

describe('evals background echo: the delay line keeps delay_ms in time through stalls, bursts and jitter', () => {
  for (const delayMs of [60, 200]) {
    it(`delay_ms ${delayMs}, steady packets and frames: every sample echoed exactly delay_ms later`, () => {
      const r = expectOnTime(simulate(new EchoLine(0, delayMs), 100), delayMs);
      expect(r.missed).to.equal(0);
      // every sample from the first one delay_ms after the platform's first to the last frame's end
      expect(r.echoed).to.equal(100 * FRAME - (delayMs + TRANSIT - PHASE) * 8);
    });

    it(`delay_ms ${delayMs}, a 130 ms event-loop stall and a late timer: the frames sent at once carry no other delay`, () => {
      // the phone's timer 0-9 ms late (a fixed pattern), the loop stalled twice: frames go in catch-up bursts
      const sent = simulate(new EchoLine(0, delayMs), 150, {
        stalls: [
          [1003, 130],
          [2011, 75],
        ],
        timerLate: (k) => (k * 7) % 10,
      });
      const r = expectOnTime(sent, delayMs);
      expect(r.echoed).to.be.above(120 * FRAME);
      // left out: only what the stall kept unread while its frames went, not the rest of the call
      expect(r.missed).to.be.at.most(((130 + 75) / 20 + 2) * FRAME);
      const late = sent.filter((f) => f.due > 2200 + delayMs);
      expect(expectOnTime(late, delayMs).missed, 'after the stalls').to.equal(0);
    });
  }

  it('jittered and bursty packets across the RTP timestamp wrap: each sample still echoed at delay_ms', () => {
    // every other packet 20 ms late; packets 40-44 held 90 ms by the network and then all at once
    const netLate = (n: number) => (n >= 40 && n <= 44 ? 90 - (n - 40) * 20 : n % 2 === 1 ? 20 : 0);
    const sent = simulate(new EchoLine(0, 60), 120, { netLate, ts0: 2 ** 32 - 30 * FRAME, timerLate: (k) => (k * 3) % 10 });
    const r = expectOnTime(sent, 60);
    expect(r.echoed).to.be.above(110 * FRAME);
    expect(r.missed).to.be.at.most(4 * FRAME);
  });

  // 150 ms: nothing of it echoable at 60 ms; 50 ms: some of each packet, by the frame's phase (a frame
  // takes what its echo needs when it goes, up to a frame before the last sample's echo is due)
  for (const step of [150, 50])
    it(`a stream late for good (its path ${step} ms longer from packet 50 on) is echoed again, delay_ms after it is now heard, half a second on`, () => {
      const sent = simulate(new EchoLine(0, 60), 200, { netLate: (n) => (n >= 50 ? step : 0) });
      // before the step: exact (the frames whose samples came from packets 0-49)
      expect(
        expectOnTime(
          sent.filter((f) => f.due <= 1040),
          60,
        ).missed,
      ).to.equal(0);
      // the packets from 50 on come `step` ms later than their place: what is echoed of them is exact,
      // what is left out was unread, until the run of them has lasted BEHIND_MS (500 ms of arrivals and
      // of audio: packet 50 to packet 75)
      const anchoredAt = 20 * 75 + step;
      expectOnTime(
        sent.filter((f) => f.due > 1040 && f.due <= anchoredAt),
        60,
      );
      // then placed anew, `step` ms later: every sample echoed delay_ms after the phone now has it
      const later = sent.filter((f) => f.due > anchoredAt);
      const after = expectOnTime(later, 60 + step);
      expect(after.missed).to.equal(0);
      expect(after.echoed).to.equal(later.length * FRAME);
    });

  it('another stream (a new SSRC) is echoed on its own timeline', () => {
    const line = new EchoLine(0, 40);
    line.heard(new Int16Array(FRAME).fill(5), 1000, 1, 0);
    line.heard(new Int16Array(FRAME).fill(6), 1160, 1, 20);
    // the platform's stream restarted 3 s later: another SSRC, another timestamp origin, a timestamp behind the first's
    line.heard(new Int16Array(FRAME).fill(7), 99_000, 2, 3000);
    line.heard(new Int16Array(FRAME).fill(8), 12, 3, 3020);
    const frames = [0, 20, 40, 60, 3040, 3060, 3080].map((due) => {
      const f = new Int16Array(FRAME);
      line.mix(f, due);
      return f[0];
    });
    expect(frames).to.deep.equal([0, 0, 5, 6, 7, 8, 0]);
  });

  it('the gain scales what is echoed', () => {
    const line = new EchoLine(-20, 20);
    line.heard(new Int16Array(FRAME).fill(1000), 0, 1, 0);
    const frames = [new Int16Array(FRAME), new Int16Array(FRAME)];
    frames.forEach((f, i) => line.mix(f, i * 20));
    expect([frames[0]![0], frames[1]![0]]).to.deep.equal([0, 100]);
  });
});
