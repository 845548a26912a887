// The native codec module itself: it is built on this machine, each instance's native state is freed
// when closed (10,000 instances: RSS stays bounded), nothing is allocated per frame, and bad arguments
// (wrong handle, wrong buffer type, short buffers, bad ranges, corrupt packets) get clear errors
// without a write past any buffer.
import { expect } from 'chai';
import { type Codec, type CodecName, codecAvailability, createCodec, G722Codec, OpusCodec, Resampler } from '../../../media-engine/codecs';
import { nativeCodecs, nativeCodecsError } from '../../../media-engine/native/codecs';
import { collectGarbage } from '../../../testkit/gc';
import { speechAt } from './support';
import { allocatedPerCall } from '../../../testkit/media-engine/heap';

/** Bytes of JS heap allocated per call of fn (after a warm-up; the least of three rounds, as hot-path-alloc.test.ts). */
function bytesPerCall(fn: (i: number) => void, n: number): number {
  for (let i = 0; i < n / 10; i++) fn(i);
  return Math.min(allocatedPerCall(fn, n), allocatedPerCall(fn, n), allocatedPerCall(fn, n));
}

describe('media-engine codecs: the native module', function () {
  this.timeout(120_000);

  it('is built here and every codec is available', () => {
    expect(nativeCodecsError, 'run bash scripts/build-native.sh').to.equal(null);
    expect(nativeCodecs?.opusVersion).to.match(/^libopus 1\./);
    for (const [name, a] of Object.entries(codecAvailability())) expect(a.available, name).to.equal(true);
  });

  it('10,000 instances of each native codec created and closed leave RSS bounded', async () => {
    const frame = speechAt(16000).subarray(16000, 16320);
    const buf = new Uint8Array(1275);
    const pcm = new Int16Array(960);
    const cycle = (count: number): void => {
      for (let i = 0; i < count; i++) {
        const o = new OpusCodec();
        o.decode(buf, pcm, 0, o.encode(frame, buf));
        o.close();
        const g = new G722Codec();
        g.decode(buf, pcm, 0, g.encode(frame, buf));
        g.close();
        const r = new Resampler(16000, 48000);
        r.process(frame, pcm);
        r.close();
      }
    };
    cycle(1000); // warm-up: allocator arenas and JIT
    await collectGarbage();
    const before = process.memoryUsage().rss;
    cycle(10_000);
    await collectGarbage();
    const grown = process.memoryUsage().rss - before;
    // an Opus encoder + decoder alone is ~ 45 KB: leaking them would be ~ 450 MB here
    expect(grown / 1e6, 'RSS growth, MB').to.be.below(40);
  });

  it("instances never closed are freed when collected (their handles' finalisers)", async () => {
    const batch = (count: number): void => {
      for (let i = 0; i < count; i++) {
        new OpusCodec();
        new G722Codec();
      }
    };
    // as many alive at once in both batches: the second reuses what the first one's finalisers freed
    // (about 230 MB more if they freed nothing)
    batch(5000);
    await collectGarbage(8);
    const before = process.memoryUsage().rss;
    batch(5000);
    await collectGarbage(8);
    expect((process.memoryUsage().rss - before) / 1e6, 'RSS growth, MB').to.be.below(60);
  });

  it('encode and decode allocate nothing per frame (G.711, G.722, Opus, resampler)', () => {
    const speech = speechAt(16000);
    const narrow = speechAt(8000);
    const out = new Int16Array(960);
    const bytes = new Uint8Array(1275);
    const check = (name: CodecName, n: number): void => {
      const c: Codec = createCodec(name);
      const src = c.sampleRate === 8000 ? narrow : speech;
      const frames = Math.floor(src.length / c.frameSamples) - 1;
      const views = Array.from({ length: frames }, (_, k) => src.subarray(k * c.frameSamples, (k + 1) * c.frameSamples));
      const per = bytesPerCall((i) => {
        const len = c.encode(views[i % frames], bytes);
        c.decode(bytes, out, 0, len);
      }, n);
      c.close();
      expect(per, `${name} bytes per frame`).to.be.below(1);
    };
    check('PCMU', 50_000);
    check('G722', 20_000);
    check('opus', 3_000);
    const r = new Resampler(16000, 48000);
    const frame = speech.subarray(0, 320);
    expect(
      bytesPerCall(() => r.process(frame, out), 20_000),
      'resampler bytes per frame',
    ).to.be.below(1);
    r.close();
  });

  describe('bad input', () => {
    it('a closed codec refuses every call with ERR_CODEC_CLOSED; close twice is harmless', () => {
      for (const name of ['PCMU', 'G722', 'opus'] as const) {
        const c = createCodec(name);
        c.close();
        c.close();
        expect(c.closed).to.equal(true);
        const pcm = new Int16Array(c.frameSamples);
        const buf = new Uint8Array(c.maxPayloadBytes);
        for (const call of [() => c.encode(pcm, buf), () => c.decode(buf, pcm), () => c.conceal(pcm)]) {
          expect(call)
            .to.throw(/closed/)
            .with.property('code', 'ERR_CODEC_CLOSED');
        }
      }
    });

    it('codec options out of range are refused with the option named', () => {
      expect(() => new OpusCodec({ complexity: 11 })).to.throw(RangeError, /Opus complexity must be an integer from 0 to 10/);
      expect(() => new OpusCodec({ maxAverageBitrate: 5000 })).to.throw(RangeError, /maxAverageBitrate/);
      expect(() => new OpusCodec({ sampleRate: 44100 as 48000 })).to.throw(RangeError, /16000 or 48000/);
      expect(() => new OpusCodec({ ptime: 30 })).to.throw(RangeError, /ptime must be 10, 20, 40 or 60/);
      expect(() => new OpusCodec({ packetLossPercent: -1 })).to.throw(RangeError, /packetLossPercent/);
      expect(() => new G722Codec({ ptime: 25 })).to.throw(RangeError, /ptime/);
      expect(() => createCodec('G729' as CodecName)).to.throw(RangeError, /unknown codec G729/);
    });

    it('short buffers and payload ranges outside the payload are refused, nothing written past them', () => {
      for (const name of ['PCMU', 'G722', 'opus'] as const) {
        const c = createCodec(name);
        const N = c.frameSamples;
        expect(() => c.encode(new Int16Array(N - 1), new Uint8Array(c.maxPayloadBytes)), name).to.throw(RangeError, /pcm holds/);
        const payload = new Uint8Array(c.maxPayloadBytes);
        const len = c.encode(speechAt(c.sampleRate).subarray(8000, 8000 + N), payload);
        expect(() => c.decode(payload, new Int16Array(N), 1, len + c.maxPayloadBytes), name).to.throw(RangeError, /do not lie within/);
        expect(() => c.decode(payload, new Int16Array(N), -1, 2), name).to.throw(RangeError, /do not lie within/);
        const backing = new Int16Array(N + 16).fill(0x2222);
        expect(() => c.decode(payload, backing.subarray(0, N / 2), 0, len), name).to.throw();
        expect(
          Array.from(backing.subarray(N / 2)).every((v) => v === 0x2222),
          `${name}: nothing written past out`,
        ).to.equal(true);
        if (name !== 'PCMU') {
          const small = new Uint8Array(64).fill(0x33);
          expect(() => c.encode(speechAt(c.sampleRate).subarray(8000, 8000 + N), small.subarray(0, name === 'opus' ? 2 : 10)), name).to.throw(RangeError);
          expect(
            Array.from(small.subarray(10)).every((v) => v === 0x33),
            `${name}: nothing written past the payload buffer`,
          ).to.equal(true);
        }
        c.close();
      }
    });

    it('a corrupt or empty Opus packet is an ERR_OPUS_INVALID_PACKET error and the decoder goes on', () => {
      const o = new OpusCodec();
      const out = new Int16Array(320);
      const frame = speechAt(16000).subarray(16000, 16320);
      const buf = new Uint8Array(1275);
      const len = o.encode(frame, buf);
      // TOC code 3 (arbitrary frame count) with a frame count of 0 is invalid (RFC 6716 3.2.5)
      expect(() => o.decode(Uint8Array.from([0x03, 0x00]), out))
        .to.throw(/corrupted/)
        .with.property('code', 'ERR_OPUS_INVALID_PACKET');
      expect(() => o.decode(new Uint8Array(0), out))
        .to.throw()
        .with.property('code', 'ERR_OPUS_INVALID_PACKET');
      expect(o.decode(buf, out, 0, len)).to.equal(320);
      o.close();
    });

    it('the native functions check their handle and every argument', () => {
      const n = nativeCodecs;
      if (!n) throw new Error(String(nativeCodecsError));
      const enc = n.opusEncoderCreate(16000, 5, 24000, 1, 10, 0, 16000);
      const g = n.g722EncoderCreate();
      const pcm = new Int16Array(320);
      const out = new Uint8Array(200);
      type AnyFn = (...a: unknown[]) => unknown;
      const loose = n as unknown as Record<string, AnyFn>;
      // a handle of another kind, a plain object, nothing at all
      expect(() => loose.g722Encode(enc, pcm, 320, out)).to.throw(TypeError, /not a G.722 encoder/);
      expect(() => loose.opusEncode({}, pcm, 320, out)).to.throw(TypeError, /not a Opus encoder|not a Opus/);
      expect(() => loose.opusEncode()).to.throw(TypeError, /expects 4 arguments/);
      // wrong buffer types, non-integers, lengths out of range
      expect(() => loose.opusEncode(enc, new Float32Array(320), 320, out)).to.throw(TypeError, /pcm must be an Int16Array/);
      expect(() => loose.opusEncode(enc, pcm, 320, new Int16Array(200))).to.throw(TypeError, /out must be a Uint8Array/);
      expect(() => loose.opusEncode(enc, pcm, 321, out)).to.throw(RangeError, /not an Opus frame size/);
      expect(() => loose.opusEncode(enc, pcm, 640, out)).to.throw(RangeError, /shorter than frameSamples/);
      expect(() => loose.g722Encode(g, pcm, 319, out)).to.throw(RangeError, /even/);
      expect(() => loose.g722Encode(g, pcm, 320, new Uint8Array(100))).to.throw(RangeError, /out is shorter/);
      expect(() => loose.g722Encode(g, pcm, '320', out)).to.throw(TypeError, /samples must be a number/);
      expect(() => loose.g722Encode(g, pcm, 1.5, out)).to.throw(RangeError, /samples must be an integer/);
      expect(() => loose.opusEncoderCreate(16000, 5, 24000, 2, 10, 0, 16000)).to.throw(RangeError, /fec must be an integer from 0 to 1/);
      expect(() => loose.opusEncoderCreate(16000, 5, 24000, 1, 10, 0, 4000)).to.throw(RangeError, /maxPlaybackRate/);
      expect(() => loose.opusDecoderCreate(22050)).to.throw(RangeError, /sampleRate/);
      expect(() => loose.close(42)).to.throw(TypeError, /not a codec handle/);
      n.close(enc);
      n.close(g);
      expect(() => loose.opusEncode(enc, pcm, 320, out))
        .to.throw(/Opus encoder is closed/)
        .with.property('code', 'ERR_CODEC_CLOSED');
    });
  });
});
