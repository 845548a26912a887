// RFC 4733 events at a clock other than the codec's (issue 52): Debian 12's baresip offers Opus with
// telephone-event/8000 only. The engine answers it at 8000, reads the events a raw far end sends at
// that clock (durations in 8000 units), and sends its own with 8000 durations; two engine legs where
// the caller's offer loses its telephone-event/48000 agree on 8000 from the answer too.
import dgram from 'node:dgram';
import { expect } from 'chai';
import type { DtmfEvent, MediaServer } from '../../media-engine';
import { encodeTelephoneEvent, decodeTelephoneEvent } from '../../media-engine/rtp-packet/telephone-event';
import { sleep, useMediaServer } from '../../testkit/media-engine/support';

/** One RFC 4733 packet (PT 101) of an event that started at `ts`. */
function eventPacket(seq: number, ts: number, event: number, duration: number, end: boolean, marker: boolean): Buffer {
  const pkt = Buffer.alloc(16);
  pkt[0] = 0x80;
  pkt[1] = (marker ? 0x80 : 0) | 101;
  pkt.writeUInt16BE(seq & 0xffff, 2);
  pkt.writeUInt32BE(ts >>> 0, 4);
  pkt.writeUInt32BE(0x5eed, 8);
  pkt.set(encodeTelephoneEvent({ event, end, volume: 10, duration }), 12);
  return pkt;
}

const waitFor = async (cond: () => boolean, ms: number): Promise<void> => {
  const until = Date.now() + ms;
  while (!cond() && Date.now() < until) await sleep(20);
};

describe('media-engine: telephone-event at a clock other than the codec (Opus + telephone-event/8000)', function () {
  this.timeout(20000);
  let ms: MediaServer;
  useMediaServer({ ports: 60, workers: 1 }, (f) => ({ ms } = f));

  it('answers telephone-event/8000, reads digits at 8000 and sends its own with 8000 durations', async () => {
    const sock = dgram.createSocket('udp4');
    sock.on('error', () => undefined);
    const sent: { duration: number; end: boolean; ts: number; marker: boolean }[] = [];
    sock.on('message', (m) => {
      if (m.length < 16 || (m[1] & 0x7f) !== 101) return;
      const p = decodeTelephoneEvent(m.subarray(12))!;
      sent.push({ duration: p.duration, end: p.end, ts: m.readUInt32BE(4), marker: (m[1] & 0x80) !== 0 });
    });
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
    const port = sock.address().port;
    const offer = [
      'v=0',
      'o=- 1 1 IN IP4 127.0.0.1',
      's=-',
      'c=IN IP4 127.0.0.1',
      't=0 0',
      `m=audio ${port} RTP/AVP 96 101`,
      'a=rtpmap:96 opus/48000/2',
      'a=rtpmap:101 telephone-event/8000',
      'a=fmtp:101 0-16',
      'a=sendrecv',
      '',
    ].join('\r\n');
    const ep = await ms.createEndpoint({ remoteSdp: offer });
    try {
      expect(ep.local.sdp).to.contain('a=rtpmap:96 opus/48000/2').and.contain('a=rtpmap:101 telephone-event/8000');
      expect(ep.local.sdp).to.not.contain('telephone-event/48000');
      const got: DtmfEvent[] = [];
      ep.on('dtmf', (e: DtmfEvent) => got.push(e));
      // digit 5 for 120 ms at 8000: 160 per 20 ms, end at 960 sent three times
      let seq = 1;
      for (let i = 1; i <= 6; i++) {
        sock.send(eventPacket(seq++, 48000, 5, i * 160, i === 6, i === 1), ep.local.port, '127.0.0.1');
        if (i === 6) for (let k = 0; k < 2; k++) sock.send(eventPacket(seq++, 48000, 5, 960, true, false), ep.local.port, '127.0.0.1');
        await sleep(20);
      }
      await waitFor(() => got.length > 0, 2000);
      expect(got.map((e) => [e.dtmf, e.source, e.duration])).to.deep.equal([['5', 'rfc2833', 120]]);

      await ep.sendDtmf('7', 120);
      await waitFor(() => sent.filter((s) => s.end).length >= 3, 3000);
      expect(sent.length, JSON.stringify(sent)).to.be.at.least(6);
      expect(sent[0].marker).to.equal(true);
      // durations count on the event clock: 160 a packet, 960 at the end (48000 would say 960 a packet, 5760)
      expect(sent.map((s) => s.duration).slice(0, 6)).to.deep.equal([160, 320, 480, 640, 800, 960]);
      expect(sent.filter((s) => s.end).every((s) => s.duration === 960)).to.equal(true);
      expect(new Set(sent.map((s) => s.ts)).size, 'one event, one timestamp').to.equal(1);
    } finally {
      await ep.destroy();
      sock.close();
    }
  });

  it('two legs: an Opus offer with telephone-event/8000 only, answered and applied at 8000; digits both ways keep their duration', async () => {
    const a = await ms.createEndpoint({ codecs: ['opus'] });
    const offer = a.local.sdp
      .replace(/ 110\r\n/, ' 101\r\n')
      .replace('a=rtpmap:110 telephone-event/48000', 'a=rtpmap:101 telephone-event/8000')
      .replace('a=fmtp:110 ', 'a=fmtp:101 ');
    expect(offer).to.contain('a=rtpmap:101 telephone-event/8000');
    const b = await ms.createEndpoint({ remoteSdp: offer });
    try {
      expect(b.local.sdp).to.contain('a=rtpmap:101 telephone-event/8000');
      await a.modify(b.local.sdp);
      const atB: DtmfEvent[] = [];
      const atA: DtmfEvent[] = [];
      b.on('dtmf', (e: DtmfEvent) => atB.push(e));
      a.on('dtmf', (e: DtmfEvent) => atA.push(e));
      await a.sendDtmf('19', 120);
      await b.sendDtmf('#', 160);
      await waitFor(() => atB.length >= 2 && atA.length >= 1, 4000);
      expect(atB.map((e) => [e.dtmf, e.duration])).to.deep.equal([
        ['1', 120],
        ['9', 120],
      ]);
      expect(atA.map((e) => [e.dtmf, e.duration])).to.deep.equal([['#', 160]]);
    } finally {
      await a.destroy();
      await b.destroy();
    }
  });
});
