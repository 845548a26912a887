/**
 * The workers' three RTP socket kinds (media-engine/worker/rtp-transport.ts) behave alike: io_uring (every
 * socket of the worker on one ring, rtp_uring.c), the native one (rtp_io.c, built at set-up; read when the
 * leg is served) and node:dgram. Each kind: audio both
 * ways with contiguous timestamps, symmetric RTP (answering where the far end really sends from), RTCP
 * both ways, a steady stream's jitter near zero (the native kind takes the kernel's arrival time, not
 * the time the tick read the packet), and a taken port refused with EADDRINUSE.
 */
import { expect } from 'chai';
import dgram from 'node:dgram';
import fs from 'node:fs';
import { MediaServer, type Endpoint } from '../../media-engine';
import { NATIVE_RTP_IO_PATH, NATIVE_RTP_URING_PATH, rtpIo, rtpUring } from '../../media-engine/native';
import { createTransport, intToIpv4, ipv4ToInt, type RtpIoKind } from '../../media-engine/worker/rtp-transport';
import { serializeSenderReport } from '../../media-engine/rtp-packet/rtcp';
import { writeRtpInto } from '../../media-engine/rtp-packet/packet';
import { errnoOf, pcmuOffer as offer, portRange, rejection, sleep } from '../../testkit/media-engine/support';
import { until } from '../../testkit/poll';

async function udp(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

describe('media-engine RTP sockets: uring, native and dgram', function () {
  this.timeout(30_000);

  it('the uring and native kinds are built on this machine (scripts/build-native.sh, run by set-up); uring is the default', async () => {
    expect(fs.existsSync(NATIVE_RTP_IO_PATH), NATIVE_RTP_IO_PATH).to.equal(true);
    expect(rtpIo).to.not.equal(null);
    expect(fs.existsSync(NATIVE_RTP_URING_PATH), `${NATIVE_RTP_URING_PATH} (liburing-dev)`).to.equal(true);
    expect(rtpUring).to.not.equal(null);
    const ms = await MediaServer.start({ rtpPorts: portRange(), workers: 1 });
    try {
      expect(ms.rtpIo).to.equal('uring');
      const [w] = await ms.stats();
      expect(w.rtpIo, 'the kernel takes io_uring here').to.equal('uring');
      expect(w.rtpIoFallback).to.equal(null);
    } finally {
      await ms.destroy();
    }
  });

  it('the native module refuses bad arguments with EINVAL and closes only its own sockets', () => {
    const io = rtpIo!;
    expect(errnoOf(() => io.open('not-an-address', 0, 0))).to.equal('EINVAL');
    expect(errnoOf(() => io.open('127.0.0.1', 70000, 0))).to.equal('EINVAL');
    const fd = io.open('127.0.0.1', 0, 65536);
    try {
      expect(io.localPort(fd)).to.be.greaterThan(0);
      expect(errnoOf(() => io.recv(fd, new Uint16Array(10) as never, new Float64Array(3)))).to.equal('EINVAL');
      expect(errnoOf(() => io.recv(fd, new Uint8Array(10), new Float64Array(2)))).to.equal('EINVAL');
      expect(errnoOf(() => io.send(fd, new Uint8Array(4), 5, 0x7f000001, 9))).to.equal('EINVAL'); // longer than the buffer
      expect(io.recv(fd, new Uint8Array(10), new Float64Array(3))).to.equal(-1); // nothing waiting
      io.close(0); // not one of its sockets: stdin stays open
      expect(fs.fstatSync(0)).to.be.an('object');
    } finally {
      io.close(fd);
    }
  });

  it('refuses a bind address that is not IPv4 and does not resolve', async () => {
    const err = await rejection(MediaServer.start({ rtpPorts: portRange(), workers: 1, bindAddress: 'no-such-host.invalid' }));
    expect(err?.message).to.match(/media bind address "no-such-host.invalid" is not an IPv4 address/);
  });

  it('refuses an unknown kind', async () => {
    const err = await rejection(MediaServer.start({ rtpPorts: portRange(), workers: 1, rtpIo: 'epoll' as never }));
    expect(err?.message).to.match(/rtpIo must be 'uring', 'native' or 'dgram'/);
  });

  it('IPv4 text and integers: both ways, and what is not an IPv4 literal', () => {
    for (const a of ['127.0.0.1', '0.0.0.0', '255.255.255.255', '10.1.200.3', '192.168.0.254']) expect(intToIpv4(ipv4ToInt(a)!)).to.equal(a);
    expect(ipv4ToInt('127.0.0.1')).to.equal(0x7f000001);
    expect(ipv4ToInt('255.255.255.255')).to.equal(-1);
    for (const bad of ['', '1.2.3', '1.2.3.4.5', '256.1.1.1', '1..2.3', '1.2.3.', 'a.b.c.d', '1.2.3.4 ', '::1', '1234.1.1.1', 'example.com']) expect(ipv4ToInt(bad), bad).to.equal(null);
  });

  for (const kind of ['uring', 'native', 'dgram'] as RtpIoKind[]) {
    describe(kind, () => {
      let ms: MediaServer;
      let ep: Endpoint | null = null;
      const socks: dgram.Socket[] = [];
      before(async () => {
        // a host name to bind to is resolved once (the native socket binds to an IPv4 address)
        ms = await MediaServer.start({ rtpPorts: portRange(), workers: 1, rtpIo: kind, bindAddress: 'localhost' });
        expect(ms.rtpIo).to.equal(kind);
        expect(ms.bindAddress).to.equal('127.0.0.1');
        expect((await ms.stats())[0].rtpIo, 'the kind the worker really uses').to.equal(kind);
      });
      afterEach(async () => {
        await ep?.destroy().catch(() => undefined);
        ep = null;
        for (const s of socks.splice(0)) s.close();
      });
      after(async () => ms.destroy());

      it('audio both ways; the far end sends from another port than its SDP and is answered there; RTCP both ways; steady jitter ~0', async () => {
        const announced = await udp(); // the SDP's port: never sends
        const real = await udp(); // where the far end really sends from (a NAT)
        const rtcp = await udp();
        socks.push(announced, real, rtcp);
        const toAnnounced: number[] = [];
        const toReal: number[] = [];
        announced.on('message', (m) => toAnnounced.push(m.readUInt32BE(4)));
        real.on('message', (m) => toReal.push(m.readUInt32BE(4)));
        ep = await ms.createEndpoint({ remoteSdp: offer(announced.address().port), inbandDtmf: false });
        await ep.echo(true); // the caller's audio comes back: proves the receive path end to end
        const port = ep.local.port;
        const pkt = Buffer.alloc(172);
        const payload = new Uint8Array(160).fill(0x55);
        const ssrc = 0x1234567;
        let seq = 0;
        const timer = setInterval(() => {
          writeRtpInto(pkt, false, 0, seq, (seq * 160) | 0, ssrc, payload, 160);
          seq++;
          real.send(pkt, port, '127.0.0.1');
        }, 20);
        try {
          await sleep(300);
          rtcp.send(serializeSenderReport(ssrc, { ntpSec: 1, ntpFrac: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5 }), port + 1, '127.0.0.1');
          await sleep(1200);
        } finally {
          clearInterval(timer);
        }
        const st = await ep.getStats();
        expect(st.packetsReceived).to.be.within(50, 80);
        expect(st.rtcp.senderReports).to.equal(1);
        expect(st.rtcp.lastSender).to.deep.include({ ssrc, packetCount: 4, octetCount: 5 });
        // a timer-paced sender on a shared machine wanders by a few ms; a tick-time arrival would show ~5-10 ms
        expect(st.jitterMs).to.be.below(5);
        // latched after its probation (strict RTP: 4 packets in sequence from a source the SDP did not name): the
        // stream goes to the SDP's port until then (the set-up and 60 ms, longer on a loaded machine), all of it to
        // where the far end sends from after
        expect(toReal.length).to.be.within(45, 90);
        expect(toAnnounced.length).to.be.below(25);
        const last = toAnnounced[toAnnounced.length - 1];
        if (last !== undefined) expect(((toReal[0] - last) >>> 0) / 160, 'frames from the last to the SDP port to the first to the real one').to.be.within(1, 50);
        expect(st.foreignDropped, 'the packets of its probation').to.equal(3);
        const steps = toReal.slice(1).map((t, i) => ((t - toReal[i]) >>> 0) / 160);
        expect(
          steps.every((s) => s === 1),
          `steps ${steps.join(',')}`,
        ).to.equal(true);
      });

      it('a far end named by a host name in the SDP is sent to', async () => {
        const sink = await udp();
        socks.push(sink);
        let got = 0;
        sink.on('message', () => got++);
        ep = await ms.createEndpoint({ remoteSdp: offer(sink.address().port, 'localhost'), inbandDtmf: false });
        await sleep(600);
        expect(got).to.be.greaterThan(15);
      });

      it('a far end named by a host name that does not resolve is sent nothing (not to this machine at that port), nor one at 0.0.0.0', async () => {
        for (const host of ['0.0.0.0', 'nonexistent.invalid']) {
          const [sink, control] = [await udp(), await udp()];
          socks.push(sink, control);
          let got = 0;
          let sent = 0;
          sink.on('message', () => got++);
          control.on('message', () => sent++);
          ep = await ms.createEndpoint({ remoteSdp: offer(sink.address().port, host), inbandDtmf: false });
          // a leg beside it on the same worker, to an address: once it has sent 15 packets, so would the first have
          const beside = await ms.createEndpoint({ remoteSdp: offer(control.address().port), inbandDtmf: false });
          try {
            await until(() => sent >= 15, 5000, 'the leg beside it sending');
            expect(got, host).to.equal(0);
          } finally {
            await beside.destroy();
          }
          await ep.destroy();
          ep = null;
        }
      });

      it('a taken port is refused with EADDRINUSE, and the socket can be closed after', async () => {
        const taken = await udp();
        socks.push(taken);
        const t = createTransport(() => undefined, kind);
        const err = (await rejection(t.open('127.0.0.1', taken.address().port))) as NodeJS.ErrnoException;
        expect(err?.code).to.equal('EADDRINUSE');
        await t.close();
      });
    });
  }
});
