import { expect } from 'chai';
import { aLaw, decodeG711, encodeG711, muLaw } from '../../core/audio/g711';

describe('media-engine G.711', () => {
  it('encodes silence to the well-known idle bytes', () => {
    expect(muLaw.encodeSample(0)).to.equal(0xff);
    expect(aLaw.encodeSample(0)).to.equal(0xd5);
  });

  it('decodes known code words (ITU-T G.711 tables)', () => {
    expect(muLaw.decodeSample(0x00)).to.equal(-32124);
    expect(muLaw.decodeSample(0x80)).to.equal(32124);
    expect(muLaw.decodeSample(0xff)).to.equal(0);
    expect(muLaw.decodeSample(0x7f)).to.equal(0);
    expect(aLaw.decodeSample(0xd5)).to.equal(8);
    expect(aLaw.decodeSample(0x55)).to.equal(-8);
    expect(aLaw.decodeSample(0xaa)).to.equal(32256);
    expect(aLaw.decodeSample(0x2a)).to.equal(-32256);
  });

  it('clips at full scale and keeps the sign', () => {
    expect(muLaw.decodeSample(muLaw.encodeSample(32767))).to.equal(32124);
    expect(muLaw.decodeSample(muLaw.encodeSample(-32768))).to.equal(-32124);
    expect(aLaw.decodeSample(aLaw.encodeSample(32767))).to.equal(32256);
    expect(aLaw.decodeSample(aLaw.encodeSample(-32768))).to.equal(-32256);
  });

  it('every code word survives decode -> encode unchanged (except the duplicate zero)', () => {
    for (let b = 0; b < 256; b++) {
      if (b !== 0x7f) expect(muLaw.encodeSample(muLaw.decodeSample(b)), `mu ${b}`).to.equal(b);
      expect(aLaw.encodeSample(aLaw.decodeSample(b)), `a ${b}`).to.equal(b);
    }
  });

  it('round trips a frame within the quantisation error (< 1/16 relative)', () => {
    const pcm = new Int16Array(160);
    for (let i = 0; i < 160; i++) pcm[i] = Math.round(20000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
    for (const law of ['PCMU', 'PCMA'] as const) {
      const back = decodeG711(law, encodeG711(law, pcm));
      for (let i = 0; i < 160; i++) expect(Math.abs(back[i] - pcm[i])).to.be.at.most(Math.max(16, Math.abs(pcm[i]) / 16), `${law} ${i}`);
    }
  });
});
