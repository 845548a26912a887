/**
 * The io_uring RTP path (media-engine/native/rtp_uring.c, worker/rtp-uring.ts), issue 34 item 5: a worker's
 * sockets all sit on one ring, so a tick costs one system call for every leg's packets, where the
 * per-socket path (rtp_io.c) makes about three per leg (recvmsg, recvmsg → EAGAIN, sendto). Real UDP far
 * ends on loopback, a real worker thread, the kernel's own io_uring; the counts are the ring's
 * (io_uring_enter calls) and the packets the far ends got, not time, so the load of the machine does not
 * change them. Also: a kernel that refuses io_uring (here: a ring larger than its 32768 entries) leaves
 * the worker on the native path, said in its stats; bad options are refused; a closed socket's port is
 * free at once and a new socket of the same number gets its own packets; a burst larger than the ring's
 * receive buffers is handed over whole.
 */
import { expect } from 'chai';
import dgram from 'node:dgram';
import { MediaServer, type Endpoint } from '../../media-engine';
import { rtpUring } from '../../media-engine/native';
import { writeRtpInto } from '../../media-engine/rtp-packet/packet';
import { createTransport, peer } from '../../media-engine/worker/rtp-transport';
import { startUring, uringRing } from '../../media-engine/worker/rtp-uring';
import { errnoOf, pcmuOffer as offer, portRange, rejection, sleep } from '../../testkit/media-engine/support';

async function udp(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

/** `n` sockets of this thread's ring, each on a free port, handing its packets to `onPacket(i, ...)`. */
async function ringSockets(n: number, onPacket: (i: number, len: number, fromPort: number) => void) {
  const ts = [] as ReturnType<typeof createTransport>[];
  const ports: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = createTransport((_buf, len, _ip, fromPort) => onPacket(i, len, fromPort), 'uring');
    const probe = await udp(); // a free port for it (the module binds what it is given)
    const port = probe.address().port;
    probe.close();
    await t.open('127.0.0.1', port);
    ts.push(t);
    ports.push(port);
  }
  return { ts, ports };
}

/** `n` far ends, each echoed by its own leg; each sends 20 ms PCMU packets while `run` lasts. */
async function farEnds(ms: MediaServer, n: number) {
  const socks: dgram.Socket[] = [];
  const eps: Endpoint[] = [];
  const heard = new Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) {
    const s = await udp();
    s.on('message', (m) => {
      if (m.length === 172 && (m[1] & 0x7f) === 0) heard[i]++;
    });
    socks.push(s);
    const ep = await ms.createEndpoint({ remoteSdp: offer(s.address().port), inbandDtmf: false });
    await ep.echo(true);
    eps.push(ep);
  }
  const pkt = Buffer.alloc(172);
  const payload = new Uint8Array(160).fill(0x55);
  let seq = 0;
  let timer: NodeJS.Timeout | null = null;
  return {
    eps,
    heard,
    /** packets sent to each leg so far (the timer's rounds: fewer than 50 a second on a loaded machine) */
    rounds: () => seq,
    start() {
      timer = setInterval(() => {
        for (let i = 0; i < n; i++) {
          writeRtpInto(pkt, false, 0, seq, (seq * 160) | 0, 0x1000 + i, payload, 160);
          socks[i].send(pkt, eps[i].local.port, '127.0.0.1');
        }
        seq++;
      }, 20);
    },
    async close() {
      if (timer) clearInterval(timer);
      for (const ep of eps) await ep.destroy().catch(() => undefined);
      for (const s of socks) s.close();
    },
  };
}

describe('media-engine io_uring RTP sockets (issue 34: one system call per tick for every leg)', function () {
  this.timeout(60_000);

  it('60 legs: every leg receives and sends, and the ring makes at most 2 system calls per tick for all of them', async () => {
    const ms = await MediaServer.start({ rtpPorts: portRange(300), workers: 1, rtpIo: 'uring', tickPhases: 4 });
    const legs = 60;
    const fe = await farEnds(ms, legs);
    try {
      fe.start();
      await sleep(800); // latched and flowing
      const [a] = await ms.stats();
      const heard0 = fe.heard.reduce((x, y) => x + y, 0);
      await sleep(2000);
      const [b] = await ms.stats();
      const heard = fe.heard.reduce((x, y) => x + y, 0) - heard0;
      expect(a.rtpIo).to.equal('uring');
      expect(a.rtpRing, 'ring counters').to.not.equal(null);
      const ticks = b.ticks - a.ticks;
      const enters = b.rtpRing!.enters - a.rtpRing!.enters;
      const sent = b.rtpRing!.sent - a.rtpRing!.sent;
      const received = b.rtpRing!.received - a.rtpRing!.received;
      // 2 s at 4 phases per 20 ms: ~400 ticks, and ~6,000 packets each way on 60 legs
      expect(ticks).to.be.greaterThan(200);
      expect(enters / ticks, `${enters} io_uring_enter calls in ${ticks} ticks`).to.be.at.most(2);
      // less than one per 4 leg-frames; the per-socket path makes ~3 per leg-frame (60 legs x 100 frames: ~18,000 calls in these 2 s)
      expect(enters, 'system calls for every leg').to.be.below(sent / 4);
      expect(sent, 'sent by the ring').to.be.greaterThan(legs * 50);
      expect(received, 'received by the ring').to.be.greaterThan(legs * 50);
      expect(b.rtpRing!.sendErrors).to.equal(0);
      expect(b.rtpRing!.unsent, 'packets a full ring did not send').to.equal(0);
      expect(b.rtpRing!.dropped).to.equal(0);
      expect(heard, 'packets the far ends got back').to.be.greaterThan(legs * 50);
      expect(
        fe.heard.every((h) => h > 50),
        `each leg echoed: ${fe.heard.join(',')}`,
      ).to.equal(true);
      // the last leg took what its far end sent, whatever the machine's load let the far end send
      const st = await fe.eps[legs - 1].getStats();
      const rounds = fe.rounds();
      expect(st.packetsReceived, `the last leg received of ${rounds} sent`).to.be.at.least(Math.min(rounds - 5, Math.floor(rounds * 0.95)));
      expect(rounds).to.be.greaterThan(50);
    } finally {
      await fe.close();
      await ms.destroy();
    }
  });

  it('a closed leg frees its ports at once, and a new leg on the reused socket number gets its own packets', async () => {
    const ms = await MediaServer.start({ rtpPorts: portRange(), workers: 1, rtpIo: 'uring' });
    const far = await udp();
    try {
      const ep = await ms.createEndpoint({ remoteSdp: offer(far.address().port), inbandDtmf: false });
      const port = ep.local.port;
      await ep.destroy();
      // the port can be bound again right away (the ring's receive on it was cancelled, not left armed)
      const again = dgram.createSocket('udp4');
      await new Promise<void>((resolve, reject) => {
        again.once('error', reject);
        again.bind(port, '127.0.0.1', () => resolve());
      });
      again.close();
      // a new leg on the same worker still works after the old socket's number was reused
      const ep2 = await ms.createEndpoint({ remoteSdp: offer(far.address().port), inbandDtmf: false });
      await ep2.echo(true);
      let back = 0;
      far.on('message', () => back++);
      const pkt = Buffer.alloc(172);
      for (let i = 0; i < 25; i++) {
        writeRtpInto(pkt, false, 0, i, i * 160, 0x77, new Uint8Array(160), 160);
        far.send(pkt, ep2.local.port, '127.0.0.1');
        await sleep(20);
      }
      await sleep(200);
      expect((await ep2.getStats()).packetsReceived).to.be.within(20, 25);
      expect(back).to.be.greaterThan(15);
      await ep2.destroy();
    } finally {
      far.close();
      await ms.destroy();
    }
  });

  it('a kernel that refuses io_uring leaves the worker on the native path, and its stats say why', async () => {
    // the kernel takes at most 32768 submission entries: asking for more is refused with EINVAL, as a
    // seccomp filter or io_uring_disabled would refuse io_uring_setup
    const ms = await MediaServer.start({ rtpPorts: portRange(), workers: 1, rtpIo: 'uring', rtpRingEntries: 65536 });
    const far = await udp();
    try {
      expect(ms.rtpIo, 'what was asked').to.equal('uring');
      const [w] = await ms.stats();
      expect(w.rtpIo, 'what the worker runs').to.equal('native');
      expect(w.rtpIoFallback).to.match(/^EINVAL: io_uring_setup/);
      expect(w.rtpRing).to.equal(null);
      // and the calls still work on it
      const ep = await ms.createEndpoint({ remoteSdp: offer(far.address().port), inbandDtmf: false });
      await ep.echo(true);
      let back = 0;
      far.on('message', () => back++);
      const pkt = Buffer.alloc(172);
      for (let i = 0; i < 20; i++) {
        writeRtpInto(pkt, false, 0, i, i * 160, 0x78, new Uint8Array(160), 160);
        far.send(pkt, ep.local.port, '127.0.0.1');
        await sleep(20);
      }
      await sleep(200);
      expect(back).to.be.greaterThan(10);
      await ep.destroy();
    } finally {
      far.close();
      await ms.destroy();
    }
  });

  it('one flush hands over the packets of 300 sockets that arrived since the last (the kernel runs only 20 by default)', async () => {
    const got: number[] = [];
    const { ts, ports } = await ringSockets(300, (_i, len) => got.push(len));
    const ring = uringRing()!;
    ring.flush(); // the receives armed
    const sender = await udp();
    try {
      const pkt = Buffer.alloc(172, 1);
      for (const p of ports) sender.send(pkt, p, '127.0.0.1');
      await sleep(300);
      const before = ring.counters();
      ring.flush(); // 1,000 legs at 4 phases: ~250 sockets get a packet between two flushes
      const after = ring.counters();
      expect(after.enters - before.enters, 'one system call').to.equal(1);
      expect(got.length, 'packets handed over by that one flush').to.equal(300);
    } finally {
      sender.close();
      for (const t of ts) await t.close();
    }
  });

  it('a packet handed over by a later harvest of the flush keeps its arrival time, however long the dispatch before it took', async () => {
    const arrivals: number[] = [];
    const ts: ReturnType<typeof createTransport>[] = [];
    const ports: number[] = [];
    for (let i = 0; i < 4; i++) {
      const t = createTransport((_buf, _len, _ip, _port, arrival) => {
        // the first packet's handler takes 30 ms: the packets after the first 512 come from a later harvest
        if (arrivals.length === 0) for (const end = performance.now() + 30; performance.now() < end;);
        arrivals.push(arrival);
      }, 'uring');
      const probe = await udp();
      const port = probe.address().port;
      probe.close();
      await t.open('127.0.0.1', port);
      ts.push(t);
      ports.push(port);
    }
    const ring = uringRing()!;
    ring.flush(); // the receives armed
    const sender = await udp();
    try {
      const pkt = Buffer.alloc(172, 1);
      const t0 = performance.now();
      for (let k = 0; k < 200; k++) for (const p of ports) sender.send(pkt, p, '127.0.0.1');
      await sleep(100);
      const t1 = performance.now();
      ring.flush();
      expect(arrivals.length, 'all handed over by the one flush').to.equal(800);
      // each arrival is the kernel's stamp on this thread's clock: after the first send, before the flush
      const early = arrivals.filter((a) => a < t0 - 2);
      const late = arrivals.filter((a) => a > t1 + 2);
      expect([early.length, late.length], `before ${t0.toFixed(1)} / after ${t1.toFixed(1)}: ${early.slice(0, 3).map((a) => a.toFixed(1))}`).to.deep.equal([0, 0]);
    } finally {
      sender.close();
      for (const t of ts) await t.close();
    }
  });

  it("a burst of 4,800 packets waiting on 16 sockets (more than the ring's 4,096 buffers): every one is handed over", async () => {
    // in this thread: its ring (made here, or by an earlier test), sockets of the 'uring' kind
    const got = new Map<number, number>();
    const { ts, ports } = await ringSockets(16, (_i, len, fromPort) => got.set(fromPort, (got.get(fromPort) ?? 0) + (len === 172 ? 1 : 0)));
    const ring = uringRing()!;
    ring.flush(); // the receives armed
    const before = ring.counters();
    const sender = await udp();
    const pkt = Buffer.alloc(172, 1);
    try {
      // 16 sockets x 300 packets = 4,800 waiting at once (each socket's buffer holds ~330): more than the 4,096 buffers
      for (let k = 0; k < 300; k++) for (const p of ports) sender.send(pkt, p, '127.0.0.1');
      await sleep(300);
      for (let i = 0; i < 10; i++) {
        ring.flush();
        await sleep(20);
      }
      const after = ring.counters();
      const total = [...got.values()].reduce((a, b) => a + b, 0);
      const seen = JSON.stringify({ total, before, after });
      expect(after.dropped - before.dropped, seen).to.equal(0);
      expect(total, 'every packet the sockets held was handed over').to.equal(after.received - before.received);
      expect(total).to.equal(4800);
    } finally {
      sender.close();
      for (const t of ts) await t.close();
    }
  });

  it('a send that finds the queue full flushes it; arrivals that queue more (forwards on arrival) never run past the arena', async () => {
    const sink = await udp(); // (it may drop what it cannot buffer: the ring's count of packets sent is the measure)
    const to = peer('127.0.0.1', sink.address().port);
    const pkt = Buffer.alloc(172, 2);
    let nested = 0;
    // each arrival is sent on at once, as an Opus leg forwards to its peer, when the ring has room
    const { ts, ports } = await ringSockets(300, (i) => {
      if (ts[i].roomFor(1)) {
        ts[i].send(pkt, to);
        nested++;
      }
    });
    const ring = uringRing()!;
    ring.flush(); // the receives armed
    const sender = await udp();
    try {
      // 600 arrivals waiting (more than the 512 sends a flush takes), then 513 sends: the last finds the
      // queue full, flushes, and the arrivals that flush hands over fill it again
      for (let k = 0; k < 2; k++) for (const p of ports) sender.send(pkt, p, '127.0.0.1');
      await sleep(300);
      const before = ring.counters();
      for (let k = 0; k < 513; k++) ts[0].send(pkt, to);
      for (let i = 0; i < 5; i++) {
        ring.flush();
        await sleep(50);
      }
      expect(nested, 'arrivals sent on').to.be.greaterThan(300);
      const after = ring.counters();
      expect(after.sent - before.sent, 'every packet queued was sent').to.equal(513 + nested);
      expect(after.sendErrors - before.sendErrors).to.equal(0);
    } finally {
      sender.close();
      sink.close();
      for (const t of ts) await t.close();
    }
  });

  it('refuses a ring size that is not a positive integer, before any worker starts', async () => {
    for (const bad of [0, -1, 1.5, Number.NaN, 1 << 21]) {
      const err = await rejection(MediaServer.start({ rtpPorts: portRange(), workers: 1, rtpIo: 'uring', rtpRingEntries: bad }));
      expect(err?.message, String(bad)).to.match(/rtpRingEntries must be an integer 1\.\.1048576/);
    }
  });

  it('the module refuses a second ring on a thread, bad flush counts and bad addresses with a code', () => {
    const io = rtpUring!;
    // this (main) thread's ring, made by rtp-uring.ts (or already by an earlier test): a second one is refused
    expect(startUring()).to.equal(null);
    expect(errnoOf(() => io.init(64))).to.equal('EEXIST');
    expect(errnoOf(() => io.flush(-1))).to.equal('EINVAL');
    expect(errnoOf(() => io.flush(100_000))).to.equal('EINVAL');
    expect(errnoOf(() => io.open('not-an-address', 0, 0))).to.equal('EINVAL');
    expect(errnoOf(() => io.open('127.0.0.1', 70000, 0))).to.equal('EINVAL');
    const fd = io.open('127.0.0.1', 0, 65536);
    expect(io.localPort(fd)).to.be.greaterThan(0);
    io.close(fd);
    io.close(fd); // twice: nothing
    io.close(0); // not one of its sockets: nothing
  });
});
