// Encode → decode through each codec of the engine (G.711 in TypeScript; G.722, Opus and the
// resampler through the native module on Debian's libspandsp, libopus and libspeexdsp): speech made by
// espeak-ng and tones, with an SNR floor per codec measured at the codec's own delay, and the wideband
// check of issue #34: a 6 kHz tone survives G.722 and Opus at 16 kHz and is gone after G.711.
import { expect } from 'chai';
import { type Codec, type CodecName, createCodec, G711Codec, OpusCodec, Resampler } from '../../../media-engine/codecs';
import { add, alignedSnr, rmsOf, roundTrip, speechAt, tone, toneDb } from './support';

interface Case {
  name: CodecName;
  label: string;
  make: () => Codec;
  speechDb: number;
  toneDb: number;
}

// Floors set a few dB under what each codec gives here (G.711 ≈ 37 dB on speech, G.722 ≈ 25 dB,
// Opus ≈ 9 dB: Opus is not a waveform codec, so its sample-by-sample SNR is low even when it sounds right).
const CASES: Case[] = [
  { name: 'PCMU', label: 'PCMU', make: () => createCodec('PCMU'), speechDb: 33, toneDb: 35 },
  { name: 'PCMA', label: 'PCMA', make: () => createCodec('PCMA'), speechDb: 33, toneDb: 33 },
  { name: 'G722', label: 'G.722', make: () => createCodec('G722'), speechDb: 20, toneDb: 35 },
  { name: 'opus', label: 'Opus 16 kHz', make: () => createCodec('opus'), speechDb: 6, toneDb: 12 },
  { name: 'opus', label: 'Opus 48 kHz', make: () => createCodec('opus', { sampleRate: 48000 }), speechDb: 6, toneDb: 15 },
];

describe('media-engine codecs: encode → decode', function () {
  this.timeout(60_000);
  const open: Codec[] = [];
  const make = (c: Case): Codec => {
    const codec = c.make();
    open.push(codec);
    return codec;
  };
  after(() => open.forEach((c) => c.close()));

  for (const c of CASES) {
    it(`${c.label}: espeak-ng speech comes back at ≥ ${c.speechDb} dB SNR`, () => {
      const codec = make(c);
      const speech = speechAt(codec.sampleRate);
      const back = roundTrip(codec, speech);
      const { snr, lag } = alignedSnr(speech, back, codec.sampleRate / 100, codec.sampleRate / 10);
      expect(snr, `SNR at lag ${lag}`).to.be.at.least(c.speechDb);
    });

    it(`${c.label}: a 1 kHz tone comes back at ≥ ${c.toneDb} dB SNR and the same level`, () => {
      const codec = make(c);
      const r = codec.sampleRate;
      const x = tone(r, 1000, r * 2);
      const back = roundTrip(codec, x);
      expect(alignedSnr(x, back, r / 100, r / 10).snr).to.be.at.least(c.toneDb);
      expect(Math.abs(toneDb(back, r, 1000, r / 2, r * 2) - toneDb(x, r, 1000, r / 2, r * 2))).to.be.below(1);
    });

    it(`${c.label}: frame geometry matches its RTP profile`, () => {
      const codec = make(c);
      expect(codec.frameMs).to.equal(20);
      expect(codec.frameSamples).to.equal((codec.sampleRate * 20) / 1000);
      expect(codec.frameTicks).to.equal((codec.clockRate * 20) / 1000);
      const clock = { PCMU: 8000, PCMA: 8000, G722: 8000, opus: 48000 }[c.name];
      expect(codec.clockRate).to.equal(clock);
      if (c.name === 'opus') expect(codec.payloadType).to.deep.equal({ kind: 'dynamic' });
      else expect(codec.payloadType).to.deep.equal({ kind: 'static', pt: { PCMU: 0, PCMA: 8, G722: 9 }[c.name] });
    });
  }

  it('G.722 packs a 20 ms frame into 160 bytes (64 kbit/s) and Opus keeps to its maxaveragebitrate', () => {
    const g = make(CASES[2]);
    const speech = speechAt(16000);
    const buf = new Uint8Array(2000);
    expect(g.encode(speech.subarray(0, 320), buf)).to.equal(160);
    const o = createCodec('opus', { maxAverageBitrate: 16000 });
    open.push(o);
    let bytes = 0;
    const frames = Math.floor(speech.length / 320);
    for (let k = 0; k < frames; k++) bytes += o.encode(speech.subarray(k * 320, k * 320 + 320), buf);
    const kbps = (bytes * 8) / (frames * 20);
    expect(kbps).to.be.within(8, 20);
  });

  describe('6 kHz: the wideband test tone', () => {
    const R = 16000;
    // speech with a 6 kHz tone under it, as a phone's test call would send
    const input = (): Int16Array => {
      const sp = speechAt(R);
      return add(sp, tone(R, 6000, sp.length, 4000));
    };

    for (const c of CASES.slice(2, 4)) {
      it(`survives ${c.label} at its level (within 3 dB)`, () => {
        const x = input();
        const back = roundTrip(make(c), x);
        const from = R / 2;
        const to = back.length - R / 10;
        expect(toneDb(back, R, 6000, from, to)).to.be.closeTo(toneDb(x, R, 6000, from, to), 3);
      });
    }

    for (const law of ['PCMU', 'PCMA'] as const) {
      it(`is gone after ${law} (16 kHz → 8 kHz → ${law} → 16 kHz: more than 40 dB down)`, () => {
        const x = input();
        const down = new Resampler(16000, 8000);
        const up = new Resampler(8000, 16000);
        const g = new G711Codec(law);
        const f16 = new Int16Array(320);
        const f8 = new Int16Array(160);
        const bytes = new Uint8Array(160);
        const back = new Int16Array(x.length);
        const frames = Math.floor(x.length / 320);
        for (let k = 0; k < frames; k++) {
          expect(down.process(x.subarray(k * 320, k * 320 + 320), f8)).to.equal(160);
          g.encode(f8, bytes);
          g.decode(bytes, f8);
          expect(up.process(f8, f16)).to.equal(320);
          back.set(f16, k * 320);
        }
        down.close();
        up.close();
        const from = R / 2;
        const to = frames * 320;
        const before = toneDb(x, R, 6000, from, to);
        expect(before - toneDb(back, R, 6000, from, to)).to.be.above(40);
        // while the speech itself got through (its 500 Hz region is within a few dB)
        expect(Math.abs(toneDb(back, R, 500, from, to) - toneDb(x, R, 500, from, to))).to.be.below(3);
      });
    }
  });

  describe('Opus packets of every bandwidth, decoded at 16 and 48 kHz', () => {
    // TOC config (RFC 6716 3.1) → audio bandwidth
    const band = (toc: number): string => {
      const c = toc >> 3;
      if (c < 12) return ['NB', 'MB', 'WB'][c >> 2];
      if (c < 16) return c < 14 ? 'SWB' : 'FB';
      return ['NB', 'WB', 'SWB', 'FB'][(c - 16) >> 2];
    };
    const encoders: Array<{ label: string; band: string; make: () => OpusCodec }> = [
      { label: '48 kHz, maxplaybackrate 8000', band: 'NB', make: () => new OpusCodec({ sampleRate: 48000, maxPlaybackRate: 8000 }) },
      { label: '16 kHz', band: 'WB', make: () => new OpusCodec({ sampleRate: 16000 }) },
      { label: '48 kHz at 64 kbit/s', band: 'FB', make: () => new OpusCodec({ sampleRate: 48000, maxAverageBitrate: 64000 }) },
    ];
    for (const e of encoders) {
      it(`${e.label}: ${e.band} packets decode in both decoders with a 1 kHz tone at its level`, () => {
        const enc = e.make();
        open.push(enc);
        const x = tone(enc.sampleRate, 1000, enc.sampleRate * 2, 8000);
        const N = enc.frameSamples;
        const buf = new Uint8Array(1275);
        const packets: Uint8Array[] = [];
        for (let k = 0; (k + 1) * N <= x.length; k++) packets.push(buf.slice(0, enc.encode(x.subarray(k * N, (k + 1) * N), buf)));
        expect(band(packets[packets.length - 1][0])).to.equal(e.band);
        for (const rate of [16000, 48000] as const) {
          const dec = new OpusCodec({ sampleRate: rate });
          open.push(dec);
          const M = dec.frameSamples;
          const got = new Int16Array(packets.length * M);
          const frame = new Int16Array(M);
          packets.forEach((p, k) => {
            expect(dec.decode(p, frame)).to.equal(M);
            got.set(frame, k * M);
          });
          expect(toneDb(got, rate, 1000, rate / 2, got.length)).to.be.closeTo(toneDb(x, enc.sampleRate, 1000, enc.sampleRate / 2, x.length), 1.5);
        }
      });
    }

    it('usedtx: after 200 ms of silence, packets of 1-2 bytes but for a comfort-noise update every 400 ms', () => {
      const dtx = new OpusCodec({ useDtx: true });
      open.push(dtx);
      const buf = new Uint8Array(1275);
      const silence = new Int16Array(320);
      const sizes: number[] = [];
      for (let k = 0; k < 60; k++) sizes.push(dtx.encode(silence, buf));
      const tiny = sizes.slice(10).filter((n) => n <= 2).length;
      expect(tiny, sizes.join(',')).to.be.at.least(45);
      const plain = new OpusCodec();
      open.push(plain);
      for (let k = 0; k < 60; k++) expect(plain.encode(silence, buf), 'without usedtx').to.be.above(2);
      const sp = speechAt(16000);
      const loud = sp.subarray(16000, 16320);
      expect(rmsOf(loud)).to.be.above(300);
      expect(dtx.encode(loud, buf)).to.be.above(2);
    });
  });
});
