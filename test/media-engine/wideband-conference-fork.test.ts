// Forks of a conference at the room's rate (issue #34): a fork asked with `legRate` of a room that
// mixes at 16 kHz (a G.722 member in it) gets the 16 kHz mix, with a member's 6 kHz tone in it
// (transcription or a recording fork of a conference); without `legRate`, or in an all-PCMU room, the
// fork gets the 8 kHz mix as before. Audio injected through a conference fork at 16 kHz reaches a
// G.722 member with its 6 kHz tone.
import { expect } from 'chai';
import type { MediaServer } from '../../media-engine';
import { sleep, useMediaServer } from '../../testkit/media-engine/support';
import { toneShare, useFarEndLegs } from '../../testkit/media-engine/far-end';

function joined(frames: Int16Array[], last: number): Int16Array {
  const take = frames.slice(-last);
  const all = new Int16Array(take.reduce((n, f) => n + f.length, 0));
  let o = 0;
  for (const f of take) {
    all.set(f, o);
    o += f.length;
  }
  return all;
}

describe('media-engine conference forks at 16 kHz', function () {
  this.timeout(40000);
  let ms: MediaServer;
  useMediaServer({ ports: 100, workers: 1 }, (f) => ({ ms } = f));

  const member = useFarEndLegs(() => ms);

  it('a legRate fork of a wideband room gets the 16 kHz mix; a plain fork the 8 kHz one', async () => {
    const room = await ms.createConference('hd-fork');
    const a = await member('G722');
    const b = await member('G722');
    const c = await member('PCMU');
    for (const m of [a, b, c]) await m.leg.joinConference(room);
    const wide: Int16Array[] = [];
    const narrow: Int16Array[] = [];
    const wf = await room.forkAudioStart({ legRate: true, onFrame: (f) => void wide.push(f) });
    const nf = await room.forkAudioStart({ onFrame: (f) => void narrow.push(f) });
    expect(wf.rate, 'the legRate fork of a wideband room').to.equal(16000);
    expect(nf.rate, 'a plain fork').to.equal(8000);
    await a.far.sendTones(2, [
      [6000, 8000],
      [1000, 6000],
    ]);
    expect(wide.every((f) => f.length === 320)).to.equal(true);
    expect(narrow.every((f) => f.length === 160)).to.equal(true);
    const w = joined(wide, 50);
    expect(toneShare(w, 6000, 16000), "the 16 kHz mix holds A's 6 kHz tone").to.be.greaterThan(0.3);
    expect(toneShare(joined(narrow, 50), 1000, 8000), 'the 8 kHz mix holds the 1 kHz one').to.be.greaterThan(0.8);
    await room.destroy();
  });

  it('in an all-PCMU room a legRate fork gets the 8 kHz mix', async () => {
    const room = await ms.createConference('nb-fork');
    const a = await member('PCMU');
    const b = await member('PCMU');
    for (const m of [a, b]) await m.leg.joinConference(room);
    const frames: Int16Array[] = [];
    const f = await room.forkAudioStart({ legRate: true, onFrame: (x) => void frames.push(x) });
    expect(f.rate).to.equal(8000);
    await a.far.sendTones(1.5, [[1000, 8000]]);
    expect(frames.every((x) => x.length === 160)).to.equal(true);
    expect(toneShare(joined(frames, 40), 1000, 8000)).to.be.greaterThan(0.8);
    await room.destroy();
  });

  it('16 kHz audio injected through a conference fork reaches a G.722 member with its 6 kHz tone', async () => {
    const room = await ms.createConference('hd-inject');
    const a = await member('G722');
    const b = await member('PCMU');
    for (const m of [a, b]) await m.leg.joinConference(room);
    const f = await room.forkAudioStart({ legRate: true, onFrame: () => undefined });
    const x = new Int16Array(16000 * 3);
    for (let i = 0; i < x.length; i++) x[i] = Math.round(8000 * Math.sin((2 * Math.PI * 6000 * i) / 16000) + 6000 * Math.sin((2 * Math.PI * 1000 * i) / 16000));
    f.inject(x, 16000);
    await sleep(2200);
    expect(toneShare(a.far.lastHeard(1.5), 6000, 16000), 'the G.722 member hears the 6 kHz tone').to.be.greaterThan(0.4);
    const nb = b.far.lastHeard(1.5);
    expect(toneShare(nb, 1000, 8000), 'the PCMU member hears the 1 kHz one').to.be.greaterThan(0.8);
    expect(toneShare(nb, 2000, 8000), 'without an alias').to.be.lessThan(0.01);
    await room.destroy();
  });
});
