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

  /** Packet k's audio: speech (1000 + k), but for 3 quiet frames (0) in every 50. */
  const level = (k: number) => (k % 50 < 3 ? 0 : 1000 + k);

  /**
   * A steady far end: one 20 ms packet before each pop, those in `held` one pop later (not late: the
   * spare frame takes them). Each popped frame's first sample goes into `heard`.
   */
  const steady = (jb: JitterBuffer, from: number, pops: number, heard: number[] = [], held: Set<number> = new Set()) => {
    const out = new Int16Array(160);
    let waiting: number | null = null;
    for (let i = 0; i < pops; i++) {
      const k = from + i;
      if (waiting !== null) jb.push(waiting * 160, frame(level(waiting)));
      waiting = null;
      if (held.has(k)) waiting = k;
      else jb.push(k * 160, frame(level(k)));
      jb.pop(out);
      heard.push(out[0]);
    }
    return from + pops;
  };

  for (const order of ['received after the skip (native sockets: read at the pop)', 'received before the skip (the ring: read at the tick start)'] as const) {
    it(`skip: a stall of the reader moves its playout on, what was due meanwhile dropped, the talker heard as late as before (${order})`, () => {
      // the worker stalled over frames 10-14: its clock skipped them (the RTP clock it sends with moved on
      // by 5); the far end's packets of those frames were waiting in the socket. Left behind, the
      // playout point played 100 ms late from then on (CI: a conference heard 400 ms late)
      const jb = new JitterBuffer(1, 8, 2);
      const out = new Int16Array(160);
      const lag: number[] = [];
      const pop = (t: number) => {
        jb.pop(out);
        if (out[0]! >= 1000) lag.push(t - (out[0]! - 1000));
      };
      for (let t = 0; t < 10; t++) {
        jb.push(t * 160, frame(1000 + t));
        pop(t);
      }
      const stalled = [10, 11, 12, 13, 14, 15];
      if (order.startsWith('received before')) for (const k of stalled) jb.push(k * 160, frame(1000 + k));
      jb.skip(5);
      if (order.startsWith('received after')) for (const k of stalled) jb.push(k * 160, frame(1000 + k));
      pop(15);
      for (let t = 16; t < 40; t++) {
        jb.push(t * 160, frame(1000 + t));
        pop(t);
      }
      expect(new Set(lag), 'frames behind the newest, before and after the stall').to.deep.equal(new Set([2]));
      expect(lag, 'every pop from the third voiced').to.have.length(8 + 1 + 24);
      expect(jb.stats).to.deep.include({ dropped: 0, concealed: 0, targetFrames: 2 });
      // counted apart from late: the stall was this worker's, not the far end's network (the leg's MOS
      // counts late and dropped as loss: core/quality/leg.ts; CI on a381fe20 raised a MOS alarm on a clean call)
      expect(jb.stats.stalled, 'frames 8-12, due in the stall').to.equal(5);
      expect(jb.stats.late, 'none late for the far end').to.equal(0);
      // a packet late from before the stall is late as ever: the buffer grows for it
      jb.push(3 * 160, frame(1003));
      expect(jb.stats).to.deep.include({ late: 1, stalled: 5, targetFrames: 3 });
    });
  }

  it('a reader stalled past its capacity (packets piling up unread) hears the talker again within its depth once it reads, not silence for ever', () => {
    // a worker stalled 1.5 s under load reads 75 packets at once: past its capacity the oldest are
    // dropped, and a playout point left behind them found nothing at any later read (each new packet
    // pushed the oldest out): the talker unheard for the rest of the call (seen: a media stream's tone
    // gone after its first chunks on a loaded machine)
    const jb = new JitterBuffer(1, 8, 2);
    const out = new Int16Array(160);
    const heard: number[] = [];
    for (let t = 0; t < 250; t++) {
      jb.push(t * 160, frame(1000 + t));
      if (t >= 25 && t < 100) continue; // the reader stalled
      jb.pop(out);
      heard.push(out[0]!);
    }
    const after = heard.slice(25); // from the first read after the stall
    const firstVoiced = after.findIndex((v) => v >= 1000);
    expect(firstVoiced, 'frames read before the talker is heard again').to.be.within(0, 8);
    expect(
      after.slice(firstVoiced).every((v) => v >= 1000),
      'heard from then on',
    ).to.equal(true);
    const said = after.slice(firstVoiced);
    expect(said, 'in order').to.deep.equal([...said].sort((a, b) => a - b));
  });

  it('a sender falling behind the clock is heard: a gap of at most its depth, not a second of it dropped', () => {
    // a talker's phone (or a loaded process) sends 4 packets in the time of 5 frames for 3 s: past its
    // widest the buffer cannot absorb that; each packet is late. Dropped until they were a second late,
    // the listener heard a second of nothing in the middle of a word (seen: a caller's turn split in two
    // at a voice agent's VAD on a loaded machine).
    const jb = new JitterBuffer(1, 8, 2);
    const out = new Int16Array(160);
    const heard: number[] = [];
    let next = 0;
    /** packet n arrives at ms: 20 a packet for the first 50, then 25 */
    const arrival = (n: number) => (n < 50 ? n * 20 : 1000 + (n - 50) * 25);
    for (let pop = 0; pop < 250; pop++) {
      for (; arrival(next) <= pop * 20; next++) jb.push(next * 160, frame(1000 + next));
      jb.pop(out);
      heard.push(out[0]!);
    }
    let run = 0;
    let longest = 0;
    for (const v of heard.slice(heard.findIndex((v) => v !== 0))) {
      run = v === 0 ? run + 1 : 0;
      longest = Math.max(longest, run);
    }
    expect(longest, 'the longest run of silence (frames)').to.be.at.most(8);
    // what was heard is what was said, in order, but for the packets found late
    const said = heard.filter((v) => v >= 1000);
    expect(said, 'in order').to.deep.equal([...said].sort((a, b) => a - b));
    expect(said.length, `of ${next} packets`).to.be.at.least(next - 20);
  });

  it('gives the frame it grew back after 10 s with its spare frame never touched, skipping a quiet frame', () => {
    const jb = new JitterBuffer(1, 8, 1);
    const out = new Int16Array(160);
    let k = steady(jb, 0, 20);
    // packet k comes two pops late: too late to play, the buffer grows a frame
    jb.pop(out);
    jb.pop(out);
    jb.push(k * 160, frame(level(k)));
    expect(jb.stats.targetFrames).to.equal(2);
    const from = k + 2;
    const heard: number[] = [];
    k = steady(jb, from, 600, heard);
    expect(jb.stats.targetFrames, 'after 12 s of packets on time').to.equal(1);
    expect(jb.stats.late).to.equal(1);
    expect(jb.stats.dropped, 'the frame skipped').to.equal(1);
    const concealed = jb.stats.concealed;
    k = steady(jb, k, 100, heard);
    expect(jb.stats.concealed, 'no gap after the frame given back').to.equal(concealed);
    // every frame of speech sent since is heard, in order (but the last, still buffered): the frame skipped was a quiet one
    const spoken = Array.from({ length: k - from }, (_, i) => level(from + i)).filter((v) => v !== 0);
    const said = heard.filter((v) => v >= level(from));
    expect(said.length).to.be.at.least(spoken.length - 2);
    expect(said).to.deep.equal(spoken.slice(0, said.length));
  });

  it('gives nothing back over speech: the skip waits for a quiet frame', () => {
    const jb = new JitterBuffer(1, 8, 2);
    const out = new Int16Array(160);
    for (let k = 0; k < 700; k++) {
      jb.push(k * 160, frame(1000));
      jb.pop(out);
    }
    expect(jb.stats.targetFrames, '14 s of speech').to.equal(2);
    for (let k = 700; k < 710; k++) {
      jb.push(k * 160, frame(0));
      jb.pop(out);
    }
    expect(jb.stats.targetFrames, 'then a pause').to.equal(1);
  });

  it('keeps its spare frame while packets still come into it', () => {
    const jb = new JitterBuffer(1, 8, 2);
    // one packet in 100 comes a pop later than the others: the spare frame (beyond the next) is used
    const held = new Set(Array.from({ length: 12 }, (_, i) => 50 + i * 100));
    steady(jb, 0, 1200, [], held);
    expect(jb.stats.targetFrames).to.equal(2);
    expect(jb.stats.late).to.equal(0);
    expect(jb.stats.concealed).to.equal(0);
  });

  it('a new source starts its calm from nothing', () => {
    const jb = new JitterBuffer(1, 8, 2);
    steady(jb, 0, 490);
    // an SSRC change (the session resets the buffer): the old stream's calm does not shrink the new one's
    jb.reset();
    steady(jb, 5000, 20);
    expect(jb.stats.targetFrames).to.equal(2);
  });

  it('frameAt: a whole frame ahead of the playout point, what pop() then gives; not a part, an overlap, or one played', () => {
    const jb = new JitterBuffer(1, 8, 2);
    const out = new Int16Array(160);
    expect(jb.frameAt(0), 'nothing received').to.equal(null);
    jb.push(1000, frame(1));
    jb.push(1160, frame(2, 80)); // 10 ms
    jb.push(1480, frame(4));
    jb.push(1560, frame(5)); // reaches into the frame at 1640
    jb.push(1640, frame(6));
    expect(jb.starts).to.equal(1);
    expect(jb.playoutTs).to.equal(680);
    expect(jb.frameAt(1000)![0]).to.equal(1);
    expect(jb.frameAt(1160), 'part of a frame').to.equal(null);
    expect(jb.frameAt(1320), 'nothing there').to.equal(null);
    expect(jb.frameAt(1480), 'another entry reaches into it').to.equal(null);
    expect(jb.frameAt(1640), 'an earlier entry reaches into it').to.equal(null);
    // changed ahead (a canceller), played changed
    jb.frameAt(1000)!.fill(7, 0, 160);
    for (let i = 0; i < 3; i++) jb.pop(out);
    expect(jb.poppedTs).to.equal(1000);
    expect(out[0]).to.equal(7);
    expect(jb.frameAt(1000), 'played').to.equal(null);
    jb.reset();
    jb.push(9000, frame(9));
    expect(jb.starts, 'a reset starts a new count').to.equal(2);
    expect(jb.oldestTs).to.equal(9000);
  });
});
