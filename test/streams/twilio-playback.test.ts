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

  it('a short last chunk is handed over as it is and its mark waits only for its length', () => {
    const r = rig();
    r.p.media(Buffer.alloc(160, 3));
    r.p.mark('half');
    expect(r.played.map((f) => f.bytes)).to.deep.equal([160]);
    r.ticks(20, 100);
    expect(r.marks).to.deep.equal([{ name: 'half', at: 20 }]);
  });
});
