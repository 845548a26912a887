// The mixer's whisper (docs/pbx.md "Supervisor"): a member heard by one member only. The customer
// (c) must get none of the supervisor's (s) audio: sample-exact, so the whisper is infinitely far
// below what the agent (a) hears, not just 60 dB.
import { expect } from 'chai';
import { ConferenceMixer } from '../../media-engine/worker/mixer';
import { member, ramp, sum } from './mixer-frames';

describe('media-engine conference mixer: whisper', () => {
  const fa = ramp((i) => 1000 + i);
  const fc = ramp((i) => (i % 2 ? -2000 : 500));
  const fs = ramp((i) => 300 - i);

  it('a whispering member is heard by its one listener; the others hear exactly what they would without it', () => {
    const [a, c, s] = [member('a', fa), member('c', fc), member('s', fs)];
    const m = new ConferenceMixer('x');
    for (const x of [a, c, s]) m.join(x);
    s.heardOnlyBy = 'a';
    m.tick();
    m.tick();
    expect(Array.from(a.mixOut), 'agent: customer + supervisor').to.deep.equal(sum(fc, fs));
    expect(Array.from(c.mixOut), 'customer: agent only').to.deep.equal(sum(fa));
    expect(Array.from(s.mixOut), 'supervisor: both').to.deep.equal(sum(fa, fc));
    expect(Array.from(m.mix), 'the recorded mix leaves the whisper out').to.deep.equal(sum(fa, fc));
    // barge: everyone hears it again
    s.heardOnlyBy = null;
    m.tick();
    expect(Array.from(c.mixOut)).to.deep.equal(sum(fa, fs));
    // listen: muted in, nobody hears it
    s.muteIn = true;
    m.tick();
    expect(Array.from(a.mixOut)).to.deep.equal(sum(fc));
    expect(Array.from(c.mixOut)).to.deep.equal(sum(fa));
    expect(Array.from(s.mixOut)).to.deep.equal(sum(fa, fc));
  });
});
