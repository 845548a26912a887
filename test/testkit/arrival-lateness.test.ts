// testkit's ArrivalLateness (lossy-relay/arrival-lateness.ts): how late a stream's RTP reached the relay, against its own
// timestamps. A test that needs a clean path (observability/quality: the clean call) judges only when the
// worst is at most the jitter buffer's depth; so a stall must show at its length, a steady stream as 0, and
// neither the wrap of the 32-bit timestamp, a new SSRC nor another payload type may read as a jump. Pure:
// times are given, no clock.
import { expect } from 'chai';
import { ArrivalLateness } from '../../testkit/lossy-relay/arrival-lateness';

const SSRC = 0x1234;
const PCMU = 0;

/** `n` packets of 20 ms at 8 kHz from timestamp `ts0`, arriving on time from `t0` plus `extra(i)` ms. */
function stream(a: ArrivalLateness, n: number, ts0: number, extra: (i: number) => number, t0 = 1000, ssrc = SSRC): void {
  for (let i = 0; i < n; i++) a.add(ssrc, PCMU, (ts0 + i * 160) >>> 0, t0 + i * 20 + extra(i));
}

describe('testkit ArrivalLateness: how late RTP reached the relay', () => {
  it('a steady stream is 0 late; one packet is nothing to compare', () => {
    const a = new ArrivalLateness(8000);
    a.add(SSRC, PCMU, 0, 5);
    expect(a.worstMs).to.equal(0);
    stream(a, 50, 160, () => 0, 25);
    expect(a.worstMs).to.equal(0);
  });

  it('a stall of 150 ms shows at its length, for the packets it held (a burst read at once)', () => {
    const a = new ArrivalLateness(8000);
    // packets 10..17 were due during a 150 ms stall and read together when it ended (at 10's time + 150)
    stream(a, 50, 0, (i) => (i >= 10 && i < 18 ? 150 - (i - 10) * 20 : 0));
    expect(a.worstMs).to.be.closeTo(150, 1e-9);
  });

  it('relative to the earliest packet: a first packet 60 ms late reads as 60 (the others are its measure)', () => {
    const a = new ArrivalLateness(8000);
    stream(a, 20, 0, (i) => (i === 0 ? 60 : 0));
    expect(a.worstMs).to.be.closeTo(60, 1e-9);
  });

  it('the timestamp wrapping past 2^32 is 20 ms on, not a jump', () => {
    const a = new ArrivalLateness(8000);
    stream(a, 30, 0xffffffff - 160 * 10, () => 0);
    expect(a.worstMs).to.be.closeTo(0, 1e-9);
  });

  it('a new SSRC (another timestamp base) starts over, keeping the worst of the stream before', () => {
    const a = new ArrivalLateness(8000);
    stream(a, 20, 0, (i) => (i === 5 ? 30 : 0));
    stream(a, 20, 0x7000_0000, () => 0, 1400, 0x9999);
    expect(a.worstMs).to.be.closeTo(30, 1e-9);
    stream(a, 20, 0x1000, (i) => (i === 3 ? 70 : 0), 1800, 0x7777);
    expect(a.worstMs).to.be.closeTo(70, 1e-9);
  });

  it("another payload type (a telephone-event's one timestamp over 200 ms) is not the stream's clock", () => {
    const a = new ArrivalLateness(8000);
    stream(a, 10, 0, () => 0);
    for (let i = 0; i < 10; i++) a.add(SSRC, 101, 1600, 1200 + i * 20);
    expect(a.worstMs).to.be.closeTo(0, 1e-9);
  });

  it('at 48 kHz (Opus) a 20 ms packet is 960 ticks', () => {
    const a = new ArrivalLateness(48000);
    for (let i = 0; i < 20; i++) a.add(SSRC, 111, i * 960, i * 20 + (i === 7 ? 45 : 0));
    expect(a.worstMs).to.be.closeTo(45, 1e-9);
  });
});
