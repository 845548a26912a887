import { expect } from 'chai';
import { JitterBuffer } from '../../media-engine/jitter/jitter-buffer';

const frame = (v: number, n = 160) => new Int16Array(n).fill(v);

describe('media-engine jitter buffer', () => {
  it('plays reordered packets in timestamp order after the initial delay', () => {
    const jb = new JitterBuffer(1, 8, 2);
    const out = new Int16Array(160);
    jb.push(1000, frame(1));
    jb.push(1320, frame(3)); // arrives before #2
    jb.push(1160, frame(2));
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      jb.pop(out);
      seen.push(out[0]);
    }
    expect(seen).to.deep.equal([0, 0, 1, 2, 3]);
  });

  it('conceals a lost packet by fading the previous frame, then resumes', () => {
    const out = new Int16Array(160);
    const jb2 = new JitterBuffer(1, 8, 1);
    jb2.push(0, frame(1000));
    jb2.push(320, frame(3000));
    const vals: number[] = [];
    for (let i = 0; i < 4; i++) {
      jb2.pop(out);
      vals.push(out[0]);
    }
    // delay frame, packet 0, concealment (faded copy), packet 2
    expect(vals[0]).to.equal(0);
    expect(vals[1]).to.equal(1000);
    expect(vals[2]).to.be.within(1, 999);
    expect(vals[3]).to.equal(3000);
    expect(jb2.stats.concealed).to.equal(1);
  });

  it('re-chunks 30 ms packets into 20 ms frames', () => {
    const jb = new JitterBuffer(1, 8, 1);
    const out = new Int16Array(160);
    const a = new Int16Array(240).map((_, i) => i);
    const b = new Int16Array(240).map((_, i) => 240 + i);
    jb.push(0, a);
    jb.push(240, b);
    jb.pop(out); // delay
    const got: number[] = [];
    for (let i = 0; i < 3; i++) {
      jb.pop(out);
      got.push(...out);
    }
    expect(got).to.deep.equal(Array.from({ length: 480 }, (_, i) => i));
  });

  it('drops duplicates and grows its delay after a late packet', () => {
    const jb = new JitterBuffer(1, 8, 1);
    const out = new Int16Array(160);
    jb.push(0, frame(1));
    jb.push(0, frame(9)); // duplicate ignored
    jb.pop(out);
    jb.pop(out);
    expect(out[0]).to.equal(1);
    jb.pop(out);
    jb.pop(out); // the playout point passed 160 and 320
    jb.push(160, frame(2)); // too late
    expect(jb.stats.late).to.equal(1);
    expect(jb.stats.targetFrames).to.equal(2);
  });

  it('resynchronises on a large timestamp jump (new talk spurt or sender restart)', () => {
    const jb = new JitterBuffer(1, 8, 1);
    const out = new Int16Array(160);
    jb.push(0, frame(1));
    jb.pop(out);
    jb.pop(out);
    jb.push(8000 * 60, frame(7));
    jb.pop(out);
    jb.pop(out);
    expect(out[0]).to.equal(7);
  });

  it('a frame over one whole aligned packet is that packet; a part-filled one is zero where nothing came', () => {
    const jb = new JitterBuffer(1, 8, 1);
    const out = new Int16Array(160).fill(-7); // what the caller's frame held before: must not show through
    jb.push(0, frame(5));
    jb.push(160, frame(6, 80)); // 10 ms, then nothing for the second half
    jb.pop(out); // the initial delay
    jb.pop(out);
    expect(Array.from(new Set(out))).to.deep.equal([5]);
    jb.pop(out);
    expect(Array.from(new Set(out.subarray(0, 80)))).to.deep.equal([6]);
    expect(Array.from(new Set(out.subarray(80)))).to.deep.equal([0]);
  });

  it('a later packet overlapping a whole one still overwrites its part of the frame', () => {
    const jb = new JitterBuffer(1, 8, 1);
    const out = new Int16Array(160);
    jb.push(0, frame(1));
    jb.push(80, frame(2)); // starts in the middle of the first one's frame
    jb.pop(out);
    jb.pop(out);
    expect([out[0], out[79], out[80], out[159]]).to.deep.equal([1, 1, 2, 2]);
  });

  it('reserve hands back the place to decode into: the same frames as push, null for a duplicate or a late packet', () => {
    const a = new JitterBuffer(1, 8, 2);
    const b = new JitterBuffer(1, 8, 2);
    const order = [0, 2, 1, 3, 3, 5, 4, 7, 6];
    order.forEach((k, n) => {
      a.push(k * 160, frame(k + 1));
      const into = b.reserve(k * 160, 160);
      if (n === 4) return void expect(into, 'the duplicate').to.equal(null);
      expect(into, `packet ${k}`).to.not.equal(null);
      into!.fill(k + 1, 0, 160);
    });
    const oa = new Int16Array(160);
    const ob = new Int16Array(160);
    for (let i = 0; i < 12; i++) {
      a.pop(oa);
      b.pop(ob);
      expect(Array.from(ob), `frame ${i}`).to.deep.equal(Array.from(oa));
    }
    expect(b.stats).to.deep.equal(a.stats);
    expect(b.reserve(0, 160), 'long past its playout time').to.equal(null);
    expect(b.stats.late).to.equal(a.stats.late + 1);
  });

  /** A steady far end: one 20 ms packet before each pop, `late` ones held back one pop (not late: the margin takes them). */
  const steady = (jb: JitterBuffer, from: number, pops: number, held: Set<number> = new Set()) => {
    const out = new Int16Array(160);
    let waiting: number | null = null;
    for (let i = 0; i < pops; i++) {
      const k = from + i;
      if (waiting !== null) jb.push(waiting * 160, frame(waiting + 1));
      waiting = null;
      if (held.has(k)) waiting = k;
      else jb.push(k * 160, frame(k + 1));
      jb.pop(out);
    }
    return from + pops;
  };

  it('shrinks back after 10 s in which the margin it grew was never used', () => {
    const jb = new JitterBuffer(1, 8, 1);
    const out = new Int16Array(160);
    let k = steady(jb, 0, 20);
    // packet k comes two pops late: too late to play, the buffer grows a frame
    jb.pop(out);
    jb.pop(out);
    jb.push(k * 160, frame(1));
    expect(jb.stats.targetFrames).to.equal(2);
    k = steady(jb, k + 2, 600);
    expect(jb.stats.targetFrames, 'after 12 s of packets on time').to.equal(1);
    expect(jb.stats.late).to.equal(1);
    // and plays on without a gap: every frame from here on is the packet sent for it
    const before = jb.stats.concealed;
    k = steady(jb, k, 100);
    expect(jb.stats.concealed).to.equal(before);
    expect(jb.stats.late).to.equal(1);
  });

  it('keeps the frame it grew while packets still come into it', () => {
    const jb = new JitterBuffer(1, 8, 2);
    // one packet in 100 comes a pop later than the others: it plays from the second frame of margin
    const held = new Set(Array.from({ length: 12 }, (_, i) => 50 + i * 100));
    steady(jb, 0, 1200, held);
    expect(jb.stats.targetFrames).to.equal(2);
    expect(jb.stats.late).to.equal(0);
    expect(jb.stats.concealed).to.equal(0);
  });
});
