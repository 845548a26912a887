import { expect } from 'chai';
import { delayImpairment, emodel, ieEff, mosFromR, oneWayDelayMs, R_DEFAULT } from '../../core/quality/emodel';

describe('core/quality: the E-model (ITU-T G.107, simplified)', () => {
  it('the default connection: R 93.2, MOS 4.41 (G.107 default values)', () => {
    const { r, mos } = emodel({ codec: 'PCMU', lossPct: 0, oneWayDelayMs: 0 });
    expect(r).to.equal(R_DEFAULT);
    expect(mos).to.be.closeTo(4.41, 0.005);
  });

  it('R → MOS as G.107 Annex B tabulates it, clamped to 1 and 4.5', () => {
    const table: [number, number][] = [
      [50, 2.58],
      [60, 3.1],
      [70, 3.6],
      [80, 4.02],
      [90, 4.34],
    ];
    for (const [r, mos] of table) expect(mosFromR(r), `R ${r}`).to.be.closeTo(mos, 0.006);
    expect(mosFromR(-5)).to.equal(1);
    expect(mosFromR(0)).to.equal(1);
    expect(mosFromR(100)).to.equal(4.5);
    expect(mosFromR(120)).to.equal(4.5);
  });

  it('Ie-eff of G.711 with concealment (Ie 0, Bpl 25.1, G.113 Appendix I) under random loss', () => {
    expect(ieEff(0, 25.1, 0)).to.equal(0);
    expect(ieEff(0, 25.1, 1)).to.be.closeTo(3.64, 0.01);
    expect(ieEff(0, 25.1, 2)).to.be.closeTo(7.01, 0.01);
    expect(ieEff(0, 25.1, 5)).to.be.closeTo(15.78, 0.01);
    // out-of-range inputs are clamped, never NaN
    expect(ieEff(0, 25.1, -3)).to.equal(0);
    expect(ieEff(0, 25.1, 250)).to.be.closeTo((95 * 100) / 125.1, 0.01);
  });

  it('Id: 0.024·d below 177.3 ms, steeper above (Cole & Rosenbluth)', () => {
    expect(delayImpairment(0)).to.equal(0);
    expect(delayImpairment(100)).to.be.closeTo(2.4, 1e-9);
    expect(delayImpairment(200)).to.be.closeTo(7.297, 0.001);
    expect(delayImpairment(400)).to.be.closeTo(9.6 + 0.11 * 222.7, 0.001);
  });

  it('a G.711 call with 3 % loss and 150 ms one way: R 79.5, MOS 4.00', () => {
    const { r, mos } = emodel({ codec: 'PCMA', lossPct: 3, oneWayDelayMs: 150 });
    expect(r).to.be.closeTo(93.2 - 3.6 - (95 * 3) / 28.1, 0.001);
    expect(mos).to.be.closeTo(4.0, 0.01);
  });

  it('one-way delay: half the RTT, the jitter buffer, the packet and the look-ahead', () => {
    expect(oneWayDelayMs({ rttMs: 100, jitterBufferMs: 40, ptimeMs: 20, codec: 'PCMU' })).to.equal(110);
    expect(oneWayDelayMs({ rttMs: null, jitterBufferMs: 40, ptimeMs: 20, codec: 'opus' })).to.equal(66.5);
    expect(emodel({ codec: 'G722', lossPct: 0, oneWayDelayMs: 0 }).mos).to.be.closeTo(4.41, 0.005);
  });
});
