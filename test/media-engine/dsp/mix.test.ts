import { expect } from 'chai';
import { clipTo16, mixAdd, MixBus, mixMinusOne } from '../../../media-engine/dsp/mix';

const frame = (fn: (i: number) => number) => Int16Array.from({ length: 160 }, (_, i) => fn(i));
const clip = (v: number) => Math.max(-32768, Math.min(32767, v));

describe('media-engine/dsp mixing', () => {
  // Three known inputs: a ramp, a constant, an alternating square wave; b+c overflow 16 bits.
  const a = frame((i) => i * 100 - 8000);
  const b = frame(() => 20000);
  const c = frame((i) => (i % 2 ? 15000 : -15000));

  it('low-level: accumulate, N-1 and clip give exact samples', () => {
    const acc = new Int32Array(160);
    mixAdd(acc, a);
    mixAdd(acc, b);
    mixAdd(acc, c, 0.5);
    expect(acc[1]).to.equal(100 - 8000 + 20000 + 7500);
    const own = new Int32Array(b);
    const out = new Int16Array(160);
    mixMinusOne(out, acc, own);
    for (let i = 0; i < 160; i++) expect(out[i]).to.equal(clip(a[i] + Math.round(c[i] * 0.5)));
    clipTo16(out, acc);
    expect(out[1]).to.equal(clip(100 - 8000 + 20000 + 7500));
  });

  it('MixBus: three participants hear exactly the other two, clipped; total is everyone', () => {
    const bus = new MixBus({ fadeSamples: 0 });
    const [sa, sb, sc] = [bus.join(), bus.join(), bus.join()];
    for (let tick = 0; tick < 2; tick++) {
      bus.input(sa, a);
      bus.input(sb, b);
      bus.input(sc, c);
      bus.mix();
      const oa = bus.output(sa);
      const ob = bus.output(sb);
      const oc = bus.output(sc);
      for (let i = 0; i < 160; i++) {
        expect(oa[i]).to.equal(clip(b[i] + c[i]));
        expect(ob[i]).to.equal(clip(a[i] + c[i]));
        expect(oc[i]).to.equal(clip(a[i] + b[i]));
        expect(bus.total[i]).to.equal(clip(a[i] + b[i] + c[i]));
      }
    }
    // Spot values that show clipping really happens (20000 + 15000 > 32767).
    expect(bus.output(sa)[1]).to.equal(32767);
    expect(bus.output(sa)[0]).to.equal(5000);
  });

  it('gain and mute-in apply to what the others hear', () => {
    const bus = new MixBus({ fadeSamples: 0 });
    const [sa, sb, sc] = [bus.join({ gain: 0.5 }), bus.join(), bus.join()];
    bus.setMuteIn(sc, true);
    bus.input(sa, a);
    bus.input(sb, b);
    bus.input(sc, c);
    bus.mix();
    for (let i = 0; i < 160; i++) {
      expect(bus.output(sb)[i]).to.equal(Math.round(a[i] * 0.5));
      expect(bus.output(sc)[i]).to.equal(clip(Math.round(a[i] * 0.5) + b[i]));
      expect(bus.output(sa)[i]).to.equal(b[i]);
    }
    expect(() => bus.setGain(sa, -1)).to.throw(RangeError);
  });

  it('join fades in and leave fades out over one frame (no clicks), then frees the slot', () => {
    const bus = new MixBus(); // 160-sample fade
    const sa = bus.join();
    const sb = bus.join();
    const loud = frame(() => 16000);
    bus.input(sa, loud);
    bus.mix();
    const heard = bus.output(sb);
    for (let i = 0; i < 160; i++) expect(heard[i]).to.equal(Math.round(16000 * ((i + 1) / 160)));
    bus.input(sa, loud);
    bus.mix();
    expect(Array.from(bus.output(sb)).every((v) => v === 16000)).to.equal(true);
    bus.leave(sa);
    bus.input(sa, loud);
    bus.mix();
    const out = bus.output(sb);
    for (let i = 0; i < 160; i++) expect(out[i]).to.equal(Math.round(16000 * (1 - (i + 1) / 160)));
    expect(out[159]).to.equal(0);
    expect(bus.size).to.equal(1);
    expect(() => bus.output(sa)).to.throw(RangeError);
    expect(bus.join()).to.equal(sa); // slot reused
  });

  it('a participant without input this tick is silence; a full bus refuses to join', () => {
    const bus = new MixBus({ fadeSamples: 0, maxParticipants: 2 });
    const sa = bus.join();
    const sb = bus.join();
    bus.input(sa, a);
    bus.mix();
    bus.mix(); // inputs are cleared after each mix
    expect(Array.from(bus.output(sb)).every((v) => v === 0)).to.equal(true);
    expect(() => bus.join()).to.throw(/full/);
    expect(() => bus.input(sa, new Int16Array(10))).to.throw(RangeError);
  });
});

describe('media-engine/dsp mixing (property)', () => {
  it('for random inputs, everyone hears exactly the saturated sum of the others', async () => {
    const fc = await import('fast-check');
    const sample = fc.integer({ min: -32768, max: 32767 });
    const party = fc.array(sample, { minLength: 160, maxLength: 160 }).map((a) => Int16Array.from(a));
    fc.assert(
      fc.property(fc.array(party, { minLength: 1, maxLength: 6 }), (inputs) => {
        const bus = new MixBus({ fadeSamples: 0 });
        const slots = inputs.map(() => bus.join());
        slots.forEach((s, k) => bus.input(s, inputs[k]));
        bus.mix();
        for (let k = 0; k < inputs.length; k++) {
          const out = bus.output(slots[k]);
          for (let i = 0; i < 160; i++) {
            let sum = 0;
            for (let j = 0; j < inputs.length; j++) if (j !== k) sum += inputs[j][i];
            if (out[i] !== clip(sum)) return false;
          }
        }
        return true;
      }),
      { numRuns: 60 },
    );
  });
});
