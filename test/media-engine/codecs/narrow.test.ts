// Wideband codecs fed 8 kHz audio (a leg bridged to G.711, an 8 kHz prompt): G.722 codes the frame from its
// 8 kHz samples (spandsp's 8 kHz mode for that frame: the upper band sent empty, no resampling, no band split),
// Opus by an encoder at 8 kHz; an Opus encoder fed such audio at 16 kHz codes narrow band while told so (SILK
// glides between bands over a few seconds, by design). A standard 16 kHz decoder hears the same audio either way.
import { expect } from 'chai';
import { createCodec, type Codec, G722Codec, OpusCodec, Resampler } from '../../../media-engine/codecs';
import { tone, toneDb } from './support';

const FRAME_8K = 160;

/** 8 kHz pcm coded frame by frame with encodeNarrow, decoded by a fresh 16 kHz decoder. */
function narrowRoundTrip(enc: G722Codec, pcm8k: Int16Array): { back: Int16Array; payloads: Uint8Array[] } {
  const dec = createCodec('G722');
  const frames = Math.floor(pcm8k.length / FRAME_8K);
  const back = new Int16Array(frames * 320);
  const out = new Int16Array(320);
  const payloads: Uint8Array[] = [];
  for (let f = 0; f < frames; f++) {
    const pay = new Uint8Array(enc.maxPayloadBytes);
    const n = enc.encodeNarrow(pcm8k.subarray(f * FRAME_8K, (f + 1) * FRAME_8K), pay);
    payloads.push(pay.subarray(0, n));
    back.set(out.subarray(0, dec.decode(pay, out, 0, n)), f * 320);
  }
  dec.close();
  return { back, payloads };
}

/** The bandwidth an Opus packet's TOC byte says (RFC 6716 3.1). */
function opusBand(toc: number): 'NB' | 'MB' | 'WB' | 'SWB' | 'FB' {
  const config = toc >> 3;
  if (config < 12) return (['NB', 'MB', 'WB'] as const)[config >> 2];
  if (config < 16) return config < 14 ? 'SWB' : 'FB';
  return (['NB', 'WB', 'SWB', 'FB'] as const)[(config - 16) >> 2];
}

describe('media-engine codecs: 8 kHz audio on a wideband codec', function () {
  this.timeout(30_000);
  const open: Codec[] = [];
  after(() => open.forEach((c) => c.close()));
  const g722 = (): G722Codec => {
    const c = createCodec('G722') as G722Codec;
    open.push(c);
    return c;
  };

  it('G.722 encodeNarrow: 160 samples at 8 kHz make a 160-byte frame whose upper band is empty, heard at 16 kHz as the same tone', () => {
    const enc = g722();
    const x = tone(8000, 1000, 8000 * 2);
    const { back, payloads } = narrowRoundTrip(enc, x);
    expect(payloads.every((p) => p.length === 160)).to.equal(true);
    // the upper band's 2 bits of each code word are constant: nothing is coded there
    expect(payloads.every((p) => p.every((b) => (b & 0xc0) === 0xc0))).to.equal(true);
    const level = toneDb(back, 16000, 1000, 8000, 32000);
    expect(Math.abs(level - toneDb(x, 8000, 1000, 4000, 16000)), `1 kHz at ${level.toFixed(1)} dB`).to.be.below(1.5);
    expect(toneDb(back, 16000, 6000, 8000, 32000), 'nothing at 6 kHz').to.be.below(level - 40);
  });

  it('G.722: 16 kHz frames, then 8 kHz frames, then 16 kHz again decode without a break in the tone', () => {
    const enc = g722();
    const dec = g722();
    const up = new Resampler(8000, 16000);
    const x8 = tone(8000, 1000, 8000 * 3);
    const x16 = new Int16Array(16000 * 3);
    up.process(x8, x16, x8.length);
    up.close();
    const pay = new Uint8Array(160);
    const out = new Int16Array(320);
    const back = new Int16Array(16000 * 3);
    for (let f = 0; f < 150; f++) {
      const narrow = f >= 50 && f < 100;
      const n = narrow ? enc.encodeNarrow(x8.subarray(f * 160, f * 160 + 160), pay) : enc.encode(x16.subarray(f * 320, f * 320 + 320), pay);
      back.set(out.subarray(0, dec.decode(pay, out, 0, n)), f * 320);
    }
    // 100 ms windows across the run: the tone is there at the same level in each (± 2 dB)
    const levels: number[] = [];
    for (let w = 2; w < 29; w++) levels.push(toneDb(back, 16000, 1000, w * 1600, w * 1600 + 1600));
    expect(Math.max(...levels) - Math.min(...levels), levels.map((l) => l.toFixed(1)).join(' ')).to.be.below(2);
  });

  it('G.722 encodeNarrow refuses a short frame and a closed codec', () => {
    const enc = g722();
    expect(() => enc.encodeNarrow(new Int16Array(100), new Uint8Array(160))).to.throw(RangeError, /8 kHz is 160/);
    enc.close();
    expect(() => enc.encodeNarrow(new Int16Array(160), new Uint8Array(160))).to.throw(/closed/);
  });

  it('Opus encodeNarrow: 160 samples at 8 kHz coded narrow band from the first packet, heard by a 16 kHz decoder as the same tone', () => {
    const c = createCodec('opus') as OpusCodec;
    const dec = createCodec('opus');
    open.push(c, dec);
    const x = tone(8000, 1000, 8000 * 2);
    const pay = new Uint8Array(c.maxPayloadBytes);
    const out = new Int16Array(320);
    const back = new Int16Array(32000);
    for (let f = 0; f < 100; f++) {
      const n = c.encodeNarrow(x.subarray(f * 160, f * 160 + 160), pay);
      expect(opusBand(pay[0]), `packet ${f}`).to.equal('NB');
      back.set(out.subarray(0, dec.decode(pay, out, 0, n)), f * 320);
    }
    const level = toneDb(back, 16000, 1000, 8000, 32000);
    expect(Math.abs(level - toneDb(x, 8000, 1000, 4000, 16000)), `1 kHz at ${level.toFixed(1)} dB`).to.be.below(2);
    expect(() => c.encodeNarrow(new Int16Array(100), pay)).to.throw(RangeError, /8 kHz is 160/);
  });

  it('Opus narrowBand(true) codes narrow band within seconds (SILK glides between bands); false gives it its wide band back', () => {
    const c = createCodec('opus') as OpusCodec;
    open.push(c);
    const x = tone(16000, 1000, 320 * 20);
    const pay = new Uint8Array(c.maxPayloadBytes);
    const bands = (frames: number): string[] => {
      const b: string[] = [];
      for (let f = 0; f < frames; f++) {
        c.encode(x.subarray((f % 20) * 320, (f % 20) * 320 + 320), pay);
        b.push(opusBand(pay[0]));
      }
      return b.slice(-5);
    };
    expect(bands(50), 'by default').to.deep.equal(['WB', 'WB', 'WB', 'WB', 'WB']);
    c.narrowBand(true);
    expect(bands(500), 'told narrow, 10 s later').to.deep.equal(['NB', 'NB', 'NB', 'NB', 'NB']);
    c.narrowBand(false);
    expect(bands(500), 'back, 10 s later').to.deep.equal(['WB', 'WB', 'WB', 'WB', 'WB']);
    c.close();
    expect(() => c.narrowBand(true)).to.throw(/closed/);
  });
});
