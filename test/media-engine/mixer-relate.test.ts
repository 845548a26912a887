// The mixer's notHeardBy (mod_conference's relate nospeak/nohear on our switch: esl/conference/relate.ts):
// a member taken out of some listeners' N-1 mixes, sample-exact, in 32 bits before the clip, while the
// others and the recorded mix hear it as before.
import { expect } from 'chai';
import { ConferenceMixer } from '../../media-engine/worker/mixer';
import { member, ramp, sum } from './mixer-frames';

describe('media-engine conference mixer: notHeardBy (relate)', () => {
  const fa = ramp((i) => 1000 + i);
  const fb = ramp((i) => (i % 2 ? -2000 : 500));
  const fc = ramp((i) => 300 - i);
  const loud = ramp(() => 30000);

  it('a member unheard by some listeners: they get the others exactly; everyone else and the mix are unchanged; cleared, all hear it', () => {
    const [a, b, c, d] = [
      member('a', fa),
      member('b', fb),
      member('c', fc),
      member(
        'd',
        ramp(() => 0),
      ),
    ];
    const m = new ConferenceMixer('x');
    for (const x of [a, b, c, d]) m.join(x);
    a.notHeardBy = new Set(['c', 'd']);
    m.tick();
    m.tick();
    expect(Array.from(b.mixOut), 'b hears a and c').to.deep.equal(sum(fa, fc));
    expect(Array.from(c.mixOut), 'c: b only').to.deep.equal(sum(fb));
    expect(Array.from(d.mixOut), 'd: b and c').to.deep.equal(sum(fb, fc));
    expect(Array.from(a.mixOut), 'a itself hears everyone else').to.deep.equal(sum(fb, fc));
    expect(Array.from(m.mix), 'the recorded mix has all').to.deep.equal(sum(fa, fb, fc));
    a.notHeardBy = null;
    m.tick();
    expect(Array.from(c.mixOut)).to.deep.equal(sum(fa, fb));
  });

  it('taken out before the clip: a listener of a clipped total hears the others unclipped', () => {
    const [a, b, c] = [member('a', loud), member('b', loud), member('c', fc)];
    const m = new ConferenceMixer('y');
    for (const x of [a, b, c]) m.join(x);
    b.notHeardBy = new Set(['c']);
    m.tick();
    m.tick();
    expect(Array.from(c.mixOut), 'c hears a alone, not the clipped a+b minus b').to.deep.equal(sum(loud));
  });
});
