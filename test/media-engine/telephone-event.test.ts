import { expect } from 'chai';
import { decodeTelephoneEvent, encodeTelephoneEvent, TelephoneEventReceiver, TelephoneEventSender, type DetectedEvent } from '../../media-engine/rtp-packet/telephone-event';

describe('media-engine RFC 4733 telephone-events', () => {
  it('encodes and decodes the payload', () => {
    const b = encodeTelephoneEvent({ event: 11, end: true, volume: 10, duration: 800 });
    expect(Array.from(b)).to.deep.equal([11, 0x8a, 0x03, 0x20]);
    expect(decodeTelephoneEvent(b)).to.deep.equal({ event: 11, end: true, volume: 10, duration: 800 });
    expect(decodeTelephoneEvent(new Uint8Array(3))).to.equal(null);
  });

  it('sender: marker on the first packet, growing duration, the end sent three times, then a gap', () => {
    const s = new TelephoneEventSender(40);
    s.enqueue('5', 100);
    // the sender reuses its packet: each one is read before the next tick
    const pkts = [];
    for (let i = 0; i < 12; i++) {
      const p = s.next();
      pkts.push(p && { ...decodeTelephoneEvent(p.payload)!, marker: p.marker });
    }
    const evs = pkts.filter((p) => p !== null);
    expect(evs).to.have.length(7); // 5 x 20 ms (last one is the first end) + 2 retransmitted ends
    expect(evs[0]).to.include({ event: 5, marker: true, end: false, duration: 160 });
    expect(evs.map((e) => e.duration)).to.deep.equal([160, 320, 480, 640, 800, 800, 800]);
    expect(evs.map((e) => e.end)).to.deep.equal([false, false, false, false, true, true, true]);
    expect(pkts[7]).to.equal(null); // inter-digit gap
    expect(() => s.enqueue('x')).to.throw(RangeError);
  });

  it('receiver: one report per event despite duplicates and retransmitted ends', () => {
    const got: DetectedEvent[] = [];
    const r = new TelephoneEventReceiver((e) => got.push(e));
    const send = (ts: number, event: number, end: boolean, duration: number) => r.onPacket(ts, encodeTelephoneEvent({ event, end, volume: 10, duration }), 0);
    send(1000, 1, false, 160);
    send(1000, 1, false, 160); // duplicate
    send(1000, 1, false, 320);
    send(1000, 1, true, 480);
    send(1000, 1, true, 480); // retransmitted end
    send(1000, 1, true, 480);
    send(5000, 11, false, 160);
    send(5000, 11, true, 400);
    expect(got.map((g) => [g.digit, g.duration])).to.deep.equal([
      ['1', 60],
      ['#', 50],
    ]);
  });

  it('receiver: reports an event whose end packets were all lost (on the next event or after a timeout)', () => {
    const got: string[] = [];
    const r = new TelephoneEventReceiver((e) => got.push(e.digit), 300);
    r.onPacket(100, encodeTelephoneEvent({ event: 3, end: false, volume: 10, duration: 160 }), 0);
    r.onPacket(900, encodeTelephoneEvent({ event: 4, end: false, volume: 10, duration: 160 }), 20);
    expect(got).to.deep.equal(['3']);
    r.flush(100);
    expect(got).to.deep.equal(['3']);
    r.flush(400);
    expect(got).to.deep.equal(['3', '4']);
    r.onPacket(900, encodeTelephoneEvent({ event: 4, end: true, volume: 10, duration: 480 }), 450); // late end: already reported
    expect(got).to.deep.equal(['3', '4']);
  });

  it('receiver: ignores non-DTMF events and short payloads', () => {
    const got: string[] = [];
    const r = new TelephoneEventReceiver((e) => got.push(e.digit));
    r.onPacket(1, encodeTelephoneEvent({ event: 16, end: true, volume: 10, duration: 160 }), 0); // flash
    r.onPacket(2, new Uint8Array([1, 0x80]), 0);
    expect(got).to.deep.equal([]);
  });
});
