// The playback queue of a bidirectional Twilio stream (core/streams/twilio-playback.ts) on a virtual
// clock: ticks of the call's clock pace the audio handed to the player, and a mark comes back when the
// audio before it has played, even when ticks arrive late and bunched (a stall of this process, of the
// node's or of the link between them: the player ran dry meanwhile and plays what comes after it).
import { expect } from 'chai';
import { PLAYBACK_LEAD, TwilioPlayback, type PlaybackSink } from '../../core/streams/twilio-playback';

/** One second of audio (50 frames of 320 bytes), each frame's bytes its number so order can be read. */
const second = (): Buffer => Buffer.concat(Array.from({ length: 50 }, (_, i) => Buffer.alloc(320, i + 1)));

function rig() {
  let now = 0;
  const played: { at: number; first: number; bytes: number }[] = [];
  const marks: { name: string; at: number }[] = [];
  let flushes = 0;
  const sink: PlaybackSink = {
    play: (pcm) => played.push({ at: now, first: pcm[0]!, bytes: pcm.length }),
    mark: (name) => marks.push({ name, at: now }),
    flush: () => flushes++,
  };
  const p = new TwilioPlayback(sink, () => now);
  return {
    p,
    played,
    marks,
    flushes: () => flushes,
    /** ticks every 20 ms from `from` to `to` (excluded) */
    ticks(from: number, to: number) {
      for (let t = from; t < to; t += 20) {
        now = t;
        p.tick();
      }
    },
    /** `n` ticks at the one instant `at` (they were held up, then came together) */
    now(at: number) {
      now = at;
    },
    bunched(at: number, n: number) {
      now = at;
      for (let i = 0; i < n; i++) p.tick();
    },
  };
}

describe('media streams: the Twilio playback queue on a virtual clock', () => {
  it('ticks on time: the second plays in order, a few frames ahead, and its mark comes back when it has played', () => {
    const r = rig();
    r.p.media(second());
    r.p.mark('one');
    expect(r.played.length, 'started at once').to.equal(PLAYBACK_LEAD);
    r.ticks(20, 1200);
    expect(r.played.map((f) => f.first)).to.deep.equal(Array.from({ length: 50 }, (_, i) => i + 1));
    for (const f of r.played) expect(f.bytes).to.equal(320);
    expect(r.marks).to.have.length(1);
    expect(r.marks[0]!.at).to.be.within(1000, 1020);
  });

  it('ticks held up 200 ms and then bunched: the player ran dry meanwhile, so the mark comes as much later', () => {
    const r = rig();
    r.p.media(second());
    r.p.mark('one');
    r.ticks(20, 220);
    r.bunched(400, 10);
    // what was handed over by 200 ms had played by 260; the rest goes from 400 on: 1 s of audio ends at 1140
    expect(r.played.length, 'no more than the lead handed over for the bunched ticks').to.be.at.most(10 + 2 * PLAYBACK_LEAD);
    r.ticks(420, 1400);
    expect(r.played).to.have.length(50);
    expect(r.marks).to.have.length(1);
    expect(r.marks[0]!.at).to.be.within(1140, 1160);
  });

  it('a mark with nothing queued comes back at once; marks keep their order behind audio', () => {
    const r = rig();
    r.p.mark('empty');
    expect(r.marks).to.deep.equal([{ name: 'empty', at: 0 }]);
    r.p.media(Buffer.alloc(320 * 5, 7));
    r.p.mark('a');
    r.p.media(Buffer.alloc(320 * 5, 8));
    r.p.mark('b');
    r.ticks(20, 400);
    expect(r.marks.map((m) => [m.name, m.at])).to.deep.equal([
      ['empty', 0],
      ['a', 100],
      ['b', 200],
    ]);
  });

  it('clear echoes every pending mark at once, drops the queue and asks the player to drop what it holds', () => {
    const r = rig();
    r.p.media(second());
    r.p.mark('one');
    r.p.media(second());
    r.p.mark('two');
    r.ticks(20, 200);
    const handed = r.played.length;
    r.p.clear();
    expect(r.marks.map((m) => m.name)).to.deep.equal(['one', 'two']);
    expect(r.flushes()).to.equal(1);
    r.ticks(200, 600);
    expect(r.played.length, 'nothing after the clear').to.equal(handed);
    r.p.media(Buffer.alloc(320, 9));
    expect(r.played.at(-1)!.first, 'audio after a clear starts at once').to.equal(9);
  });

  it('chunks of 10 ms, each with a mark: the first starts at once, then whole frames go to the player; each mark comes when its audio has played', () => {
    const r = rig();
    for (let k = 1; k <= 10; k++) {
      r.p.media(Buffer.alloc(160, k));
      r.p.mark(`m${k}`);
    }
    r.ticks(20, 200);
    // less than a frame goes only when the player is about to run dry: at the start and for the last chunk
    expect(r.played.map((f) => [f.at, f.bytes, f.first])).to.deep.equal([
      [0, 160, 1],
      [0, 320, 2],
      [0, 320, 4],
      [20, 320, 6],
      [40, 320, 8],
      [100, 160, 10],
    ]);
    // the player pads the first frame to 20 ms: m1 ends at 10, m2 at 30, m3 at 40, ... m10 at 110; each is
    // echoed at the first tick at or after its time
    const ends = [10, 30, 40, 50, 60, 70, 80, 90, 100, 110];
    expect(r.marks.map((m) => [m.name, m.at])).to.deep.equal(ends.map((t, i) => [`m${i + 1}`, 20 * Math.ceil(t / 20)]));
  });

  it('a short last chunk is played as a whole frame by the player: audio after it starts when that frame ends', () => {
    const r = rig();
    r.p.media(Buffer.alloc(160, 3));
    r.p.mark('half');
    expect(r.played.map((f) => f.bytes)).to.deep.equal([160]);
    r.now(5);
    r.p.media(Buffer.alloc(320, 4));
    r.p.mark('after');
    r.ticks(20, 100);
    expect(r.marks).to.deep.equal([
      { name: 'half', at: 20 },
      { name: 'after', at: 40 },
    ]);
  });

  it('ticks off the 20 ms grid: a mark with nothing queued never overtakes one still due', () => {
    const r = rig();
    r.p.media(Buffer.alloc(320 * 5, 1));
    r.p.mark('a');
    r.ticks(19, 100); // ticks at 19, 39, 59, 79, 99: 'a' is due at 100
    expect(r.marks).to.deep.equal([]);
    r.now(105);
    r.p.mark('b');
    expect(r.marks.map((m) => m.name)).to.deep.equal(['a', 'b']);
  });
});
