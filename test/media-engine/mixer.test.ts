import { expect } from 'chai';
import { ConferenceMixer, mixNMinus1, type MixMember } from '../../media-engine/worker/mixer';

const ramp = (f: (i: number) => number) => Int16Array.from({ length: 160 }, (_, i) => f(i));

describe('media-engine conference mixer', () => {
  const a = ramp((i) => 1000 + i);
  const b = ramp(() => 31700);
  const c = ramp((i) => (i % 2 ? -20000 : 5000));

  it('N-1 mixes of three known inputs, sample-exact with clipping', () => {
    const outs = [new Int16Array(160), new Int16Array(160), new Int16Array(160)];
    const mix = mixNMinus1([a, b, c], outs);
    for (let i = 0; i < 160; i++) {
      const clip = (v: number) => Math.max(-32768, Math.min(32767, v));
      expect(outs[0][i]).to.equal(clip(b[i] + c[i]));
      expect(outs[1][i]).to.equal(clip(a[i] + c[i]));
      expect(outs[2][i]).to.equal(clip(a[i] + b[i])); // 31000+ clips to 32767
      expect(mix[i]).to.equal(clip(a[i] + b[i] + c[i]));
    }
    expect(outs[2][0]).to.equal(32700);
    expect(outs[2][159]).to.equal(32767);
    expect(outs[0][1]).to.equal(11700);
    expect(outs[0][0]).to.equal(32767);
  });

  it('the live mixer gives the same result once settled, honours mute in/out, and fades joins and leaves', () => {
    const member = (id: string, f: Int16Array): MixMember & { f: Int16Array | null } => ({
      id,
      f,
      input() {
        return this.f;
      },
      mixOut: new Int16Array(160),
      muteIn: false,
      muteOut: false,
    });
    const ma = member('a', a);
    const mb = member('b', b);
    const mc = member('c', c);
    const m = new ConferenceMixer('x');
    m.join(ma);
    m.join(mb);
    m.join(mc);
    m.tick(); // join tick: faded in
    expect(ma.mixOut[0]).to.equal(0);
    expect(Math.abs(ma.mixOut[80])).to.be.lessThan(Math.abs(b[80] + c[80]));
    m.tick();
    const outs = [new Int16Array(160), new Int16Array(160), new Int16Array(160)];
    mixNMinus1([a, b, c], outs);
    expect(Array.from(ma.mixOut)).to.deep.equal(Array.from(outs[0]));
    expect(Array.from(mb.mixOut)).to.deep.equal(Array.from(outs[1]));
    expect(Array.from(mc.mixOut)).to.deep.equal(Array.from(outs[2]));
    // b muted in: nobody hears b; c deaf: c hears nothing
    mb.muteIn = true;
    mc.muteOut = true;
    m.tick();
    expect(Array.from(ma.mixOut)).to.deep.equal(Array.from(c));
    expect(Array.from(mb.mixOut)).to.deep.equal(Array.from(a).map((v, i) => Math.max(-32768, Math.min(32767, v + c[i]))));
    expect(mc.mixOut.every((v) => v === 0)).to.equal(true);
    mb.muteIn = false;
    mc.muteOut = false;
    // c leaves: one faded frame, then gone
    m.leave('c');
    m.tick();
    expect(ma.mixOut[0]).to.equal(Math.min(32767, b[0] + c[0]));
    expect(Math.abs(ma.mixOut[159] - b[159])).to.be.lessThan(Math.abs(c[159]));
    m.tick();
    expect(Array.from(ma.mixOut)).to.deep.equal(Array.from(b));
    expect(m.memberIds()).to.deep.equal(['a', 'b']);
  });
});
