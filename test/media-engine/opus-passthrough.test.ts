// Opus↔Opus without transcoding (issue #34): two Opus legs bridged on one worker forward each other's
// packets as they came (payload unchanged, the leg's own SSRC, sequence numbers and timestamps on the
// same grid), so the engine neither decodes nor encodes a packet (the legs' codec counters stay at 0).
// As soon as a leg needs the audio (a prompt on it, a recording of the other), it transcodes again, and
// back to forwarding when that ends. Real UDP far ends send Opus a tone made by the engine's codec module.
// On 'uring' such a pair is served in C (native/rtp_legs.c): every test runs with it and with every leg in JS.
import { expect } from 'chai';
import dgram from 'node:dgram';
import type { Endpoint, MediaServer } from '../../media-engine';
import { hearTone, isTone, tonePackets } from '../../scripts/bench/media/codec-tone';
import { offer } from '../../scripts/bench/media/codec-legs';
import { sleep, useMediaServer } from '../../testkit/media-engine/support';

interface Got {
  seq: number;
  ts: number;
  ssrc: number;
  payload: Buffer;
}

/** A far end on loopback: sends `packets` (replayed) every 20 ms to `port` from `start()` until `stop()`; keeps what it gets. */
async function farEnd(packets: Buffer[]) {
  // RTP on an even port, RTCP on the next (the engine sends its reports to port + 1)
  let s: dgram.Socket;
  let rtcp: dgram.Socket;
  for (;;) {
    s = dgram.createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
    rtcp = dgram.createSocket('udp4');
    const bound = await new Promise<boolean>((r) => {
      rtcp.once('error', () => r(false));
      rtcp.bind(s.address().port + 1, '127.0.0.1', () => r(true));
    });
    if (bound) break;
    s.close();
  }
  /** when each RTCP report of the engine's leg arrived */
  const reports: number[] = [];
  rtcp.on('message', () => reports.push(performance.now()));
  const got: Got[] = [];
  s.on('message', (m) => {
    if ((m[1] & 0x7f) !== 111) return;
    got.push({ seq: m.readUInt16BE(2), ts: m.readUInt32BE(4), ssrc: m.readUInt32BE(8), payload: Buffer.from(m.subarray(12 + (m[0] & 0x0f) * 4)) });
  });
  let timer: NodeJS.Timeout | null = null;
  let n = 0;
  /** the far end's stream: packet n goes out with sequence number seq0 + n, timestamp ts0 + 960 n */
  const stream = { ssrc: 0x1234, seq0: 0, ts0: 0 };
  const send = (to: number, pt: number, seq: number, ts: number, p: Uint8Array) => {
    const b = Buffer.alloc(12 + p.length);
    b[0] = 0x80;
    b[1] = pt;
    b.writeUInt16BE(seq & 0xffff, 2);
    b.writeUInt32BE(ts >>> 0, 4);
    b.writeUInt32BE(stream.ssrc, 8);
    b.set(p, 12);
    s.send(b, to, '127.0.0.1');
  };
  return {
    port: s.address().port,
    got,
    reports,
    stream,
    send,
    /** the Opus packet of the stream's packet number k */
    packet: (k: number) => packets[k % packets.length],
    /** packets the timer sent */
    sent: () => n,
    /** `lost(n)`: packet n is not sent (its number and time are skipped: a loss on the way) */
    start(to: number, lost: (n: number) => boolean = () => false) {
      const t0 = performance.now();
      const tick = () => {
        while (performance.now() >= t0 + n * 20) {
          if (!lost(n)) send(to, 111, stream.seq0 + n, stream.ts0 + n * 960, packets[n % packets.length]);
          n++;
        }
        timer = setTimeout(tick, 5);
      };
      tick();
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = null;
    },
    close() {
      if (timer) clearTimeout(timer);
      s.close();
      rtcp.close();
    },
  };
}

/**
 * B's far end got one stream: one SSRC, each packet the next sequence number, timestamps a whole number of
 * 20 ms frames on (more than one: a worker that stalled while B encoded skips the ticks it missed).
 */
function expectContiguous(got: Got[]): void {
  const steps = got.slice(1).map((g, i) => [(g.seq - got[i].seq) & 0xffff, (g.ts - got[i].ts) >>> 0]);
  const bad = steps.filter(([q, t]) => q !== 1 || t === 0 || t % 960 !== 0 || t > 0x80000000);
  expect(bad, JSON.stringify(bad)).to.deep.equal([]);
  expect(new Set(got.map((g) => g.ssrc)).size).to.equal(1);
}

const CONFIGS = [
  { name: 'uring, the pair served in C', inC: true },
  { name: 'uring, every leg in JS', inC: false },
];

for (const cfg of CONFIGS)
  describe(`media-engine Opus↔Opus pass-through (${cfg.name})`, function () {
    this.timeout(60000);
    let ms: MediaServer;
    let speech: string;
    useMediaServer({ ports: 60, workers: 1, speech: 'A prompt on one side of an Opus call.', server: { rtpIo: 'uring', plainLegsInC: cfg.inC } }, (f) => ({ ms, speech } = f));
    const cLegs = async () => (await ms.stats())[0].cLegs;
    const toneA = tonePackets('opus', 1000);
    const toneB = tonePackets('opus', 600);

    /** `lost`: the packets of A's far end lost on the way (by number) */
    async function call(lost?: (n: number) => boolean) {
      const fa = await farEnd(toneA);
      const fb = await farEnd(toneB);
      const a = await ms.createEndpoint({ remoteSdp: offer('opus', fa.port) });
      const b = await ms.createEndpoint({ remoteSdp: offer('opus', fb.port), near: a });
      await a.bridge(b);
      fa.start(a.local.port, lost);
      fb.start(b.local.port);
      return { fa, fb, a, b };
    }
    async function hangUp(c: Awaited<ReturnType<typeof call>>): Promise<void> {
      c.fa.close();
      c.fb.close();
      await c.a.destroy();
      await c.b.destroy();
    }
    /** Once the pair forwards (in C or JS as configured), A's far end stops its timer; returns how many packets B's far end had. */
    async function quietSource(c: Awaited<ReturnType<typeof call>>): Promise<number> {
      await sleep(600);
      expect(await cLegs(), 'legs served in C').to.equal(cfg.inC ? 2 : 0);
      c.fa.stop();
      await sleep(100);
      return c.fb.got.length;
    }
    const work = async (ep: Endpoint) => {
      const s = await ep.getStats();
      return s.codecDecoded + s.codecEncoded;
    };

    it('forwards the packets: nothing decoded or encoded, payloads as sent, its own stream headers', async () => {
      const { fa, fb, a, b } = await call();
      try {
        // (before the bridge each leg encoded silence for a tick or two)
        await sleep(300);
        const [a0, b0] = [await work(a), await work(b)];
        await sleep(1200);
        expect((await work(a)) - a0, 'codec work on A').to.equal(0);
        expect((await work(b)) - b0, 'codec work on B').to.equal(0);
        expect(await cLegs(), 'legs served in C').to.equal(cfg.inC ? 2 : 0);
        // the interarrival jitter on the 48 kHz clock (a 20 ms pace on loopback: a few ms at most)
        expect((await a.getStats()).jitterMs, 'jitter on A').to.be.below(10);
        // each packet goes on as it arrives, not at the peer's next turn (up to a tick later)
        const [sa, sb] = [await a.getStats(), await b.getStats()];
        expect(sb.forwardedOnArrival, `B sent on as they arrived, of the ${sa.packetsReceived} A received`).to.be.greaterThan(sa.packetsReceived * 0.8);
        const atB = fb.got.slice(-20);
        expect(atB.length).to.equal(20);
        // every payload B's far end got is one of the packets A's far end sent, byte for byte
        const sent = new Set(toneA.map((p) => p.toString('hex')));
        for (const g of atB) expect(sent.has(g.payload.toString('hex')), 'payload unchanged').to.equal(true);
        // B's own stream: one SSRC (not the far end's 0x1234), consecutive sequence numbers, 960 ticks apart
        expect(new Set(atB.map((g) => g.ssrc)).size).to.equal(1);
        expect(atB[0].ssrc).to.not.equal(0x1234);
        for (let i = 1; i < atB.length; i++) {
          expect((atB[i].seq - atB[i - 1].seq) & 0xffff).to.equal(1);
          expect((atB[i].ts - atB[i - 1].ts) >>> 0).to.equal(960);
        }
        expect(
          isTone(
            hearTone(
              'opus',
              atB.map((g) => g.payload),
              1000,
            ),
          ),
          "B's far end hears A's tone",
        ).to.equal(true);
        expect(
          isTone(
            hearTone(
              'opus',
              fa.got.slice(-12).map((g) => g.payload),
              600,
            ),
          ),
          "A's far end hears B's tone",
        ).to.equal(true);
      } finally {
        await hangUp({ fa, fb, a, b });
      }
    });

    it('transcodes while a prompt plays on one leg or the other is recorded, then forwards again', async () => {
      const { fa, fb, a, b } = await call();
      try {
        await sleep(600);
        const w0 = await work(b);
        await b.play(speech);
        const w1 = await work(b);
        expect(w1 - w0, 'B encoded the prompt').to.be.greaterThan(20);
        await sleep(300);
        const w2 = await work(b);
        await sleep(600);
        expect((await work(b)) - w2, 'forwarding again after the prompt').to.equal(0);
        expect(await cLegs(), 'back in C after the prompt').to.equal(cfg.inC ? 2 : 0);
        // forwarded, encoded, forwarded again (in C, then JS, then C): one stream, no gap, no jump
        expectContiguous(fb.got.filter((g) => g.ssrc !== 0x1234));
        // a recording of A needs A's audio: A decodes while it runs, and B's far end still hears A's tone
        const d0 = await work(a);
        const n0 = fb.got.length;
        await a.record(`${speech}.rec.wav`, { duration: 1 });
        expect((await work(a)) - d0, 'A decoded for its recorder').to.be.greaterThan(20);
        expect(
          isTone(
            hearTone(
              'opus',
              fb.got
                .slice(n0)
                .slice(-12)
                .map((g) => g.payload),
              1000,
            ),
          ),
          "B's far end hears A's tone throughout",
        ).to.equal(true);
      } finally {
        await hangUp({ fa, fb, a, b });
      }
    });
    it('a lossy source across RTCP reports (a C pair leaves for JS and comes back for each): the gaps stay gaps', async function () {
      this.timeout(30000);
      // every other packet of A's far end is lost on the way: B's far end must see the same gaps (a mapping
      // started anew at any packet closes the gap before it, so any restart shows)
      const { fa, fb, a, b } = await call((n) => n % 2 === 1);
      try {
        await sleep(400);
        const t0 = performance.now();
        // (what B sends from here is forwarded: its own frames before the bridge are behind)
        const n0 = fb.got.length;
        expect(await cLegs(), 'legs served in C').to.equal(cfg.inC ? 2 : 0);
        // B reports (RTCP SR) every 2.5–7.5 s: two of them after forwarding began
        const deadline = t0 + 20000;
        while (fb.reports.filter((t) => t > t0).length < 2 && performance.now() < deadline) await sleep(100);
        expect(fb.reports.filter((t) => t > t0).length, "B's reports").to.be.at.least(2);
        await sleep(300);
        expect(await cLegs(), 'back in C after the reports').to.equal(cfg.inC ? 2 : 0);
        const got = fb.got.slice(n0);
        // the source's odd numbers never came: B's stream (one offset) steps by two throughout
        const residues = new Set(got.map((g) => (g.seq - got[0].seq) & 1));
        expect([...residues], `residues of ${got.length} packets`).to.deep.equal([0]);
        const steps = got.slice(1).map((g, i) => [(g.seq - got[i].seq) & 0xffff, ((g.ts - got[i].ts) >>> 0) / 960]);
        expect(
          steps.filter(([q, t]) => q !== 2 || t !== 2),
          'each step in numbers is the step in time, 2 (over a loss)',
        ).to.deep.equal([]);
      } finally {
        await hangUp({ fa, fb, a, b });
      }
    });

    it('a burst of 30 packets at once (what the sockets held through a stall) goes on whole, in order', async () => {
      const { fa, fb, a, b } = await call();
      try {
        const n0 = await quietSource({ fa, fb, a, b });
        const first = fa.stream.seq0 + fa.sent();
        for (let k = 0; k < 30; k++) fa.send(a.local.port, 111, first + k, (first + k) * 960, fa.packet(first + k));
        await sleep(300);
        const got = fb.got.slice(n0);
        expect(got.length, 'packets of the burst B sent on').to.equal(30);
        expect(got.map((g) => (g.seq - got[0].seq) & 0xffff)).to.deep.equal(Array.from({ length: 30 }, (_, k) => k));
      } finally {
        await hangUp({ fa, fb, a, b });
      }
    });

    it("the source restarts (new SSRC and numbers) and reorders: the peer's stream goes on, no jump, no step back", async () => {
      const { fa, fb, a, b } = await call();
      try {
        const n0 = await quietSource({ fa, fb, a, b });
        fa.stream.ssrc = 0x5678;
        const seq0 = 40000;
        const ts0 = 123456789;
        const order = [...Array.from({ length: 11 }, (_, k) => k), 12, 11, ...Array.from({ length: 7 }, (_, k) => 13 + k)];
        for (const k of order) {
          fa.send(a.local.port, 111, seq0 + k, ts0 + k * 960, fa.packet(k));
          await sleep(20);
        }
        await sleep(200);
        const got = fb.got.slice(n0);
        const before = fb.got[n0 - 1];
        expect(got.length, 'every packet of the new source forwarded').to.equal(order.length);
        // anchored where B's stream stood: the next number and the next frame's time
        expect(got[0].seq, 'no jump in numbers').to.equal((before.seq + 1) & 0xffff);
        expect((got[0].ts - before.ts) >>> 0, 'no jump in time').to.equal(960);
        // the gaps and the order kept: 12 before 11, each with its own number; the stream did not step back
        expect(got.map((g) => (g.seq - got[0].seq) & 0xffff)).to.deep.equal(order);
        expect(got.map((g) => ((g.ts - got[0].ts) >>> 0) / 960)).to.deep.equal(order);
        expect(new Set(fb.got.map((g) => g.ssrc)).size, "B's own SSRC throughout").to.equal(1);
        for (const [i, k] of order.entries()) expect(got[i].payload.equals(fa.packet(k)), `payload of packet ${k}`).to.equal(true);
      } finally {
        await hangUp({ fa, fb, a, b });
      }
    });

    it('RFC 4733 digits on an Opus leg (48 kHz clock) are reported once with their duration; the pair keeps forwarding', async () => {
      const { fa, fb, a, b } = await call();
      try {
        await sleep(600);
        const digits: { dtmf: string; duration: number; source: string }[] = [];
        a.on('dtmf', (d: { dtmf: string; duration: number; source: string }) => digits.push(d));
        fa.stop();
        const ev = (end: boolean, dur: number) => new Uint8Array([5, (end ? 0x80 : 0) | 10, dur >> 8, dur & 0xff]);
        let seq = fa.stream.seq0 + fa.sent();
        const ts = fa.stream.ts0 + fa.sent() * 960;
        for (let d = 960; d <= 4800; d += 960) {
          fa.send(a.local.port, 110, seq++, ts, ev(false, d));
          await sleep(20);
        }
        for (let i = 0; i < 3; i++) fa.send(a.local.port, 110, seq++, ts, ev(true, 5760)); // the end, three times
        await sleep(200);
        expect(digits.map((d) => [d.dtmf, d.duration, d.source])).to.deep.equal([['5', 120, 'rfc2833']]);
        expect(await cLegs(), 'still served in C').to.equal(cfg.inC ? 2 : 0);
        const n0 = fb.got.length;
        fa.send(a.local.port, 111, seq, ts + 5760, fa.packet(0));
        await sleep(100);
        expect(fb.got.length - n0, 'audio after the digit forwarded').to.equal(1);
      } finally {
        await hangUp({ fa, fb, a, b });
      }
    });
  });
