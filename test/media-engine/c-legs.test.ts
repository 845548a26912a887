/**
 * Plain G.711 legs served in C (media-engine/native/rtp_legs.c, worker/c-legs.ts) behave as the JS legs
 * do: the same checks run with the C legs on and off (MediaServerOptions.plainLegsInC) and on the
 * per-socket native kind, against real loopback sockets. Two far ends (A, B) send and receive RTP and
 * RTCP; their endpoints are bridged. Each packet A sends carries its own payload byte, so what B gets
 * shows order, gaps and repeats: reordering and a duplicate are undone by the jitter buffer, a lost
 * packet counts as lost, an SSRC change restarts the source, RFC 4733 digits are reported, RTCP reports
 * the loss, and a leg that moves C → JS → C (a recording starts and stops on it) keeps its stream
 * without a gap or a sequence jump.
 */
import { expect } from 'chai';
import dgram from 'node:dgram';
import path from 'node:path';
import { MediaServer, type Endpoint } from '../../media-engine';
import { parseRtcp } from '../../media-engine/rtp-packet/rtcp';
import { writeRtpInto } from '../../media-engine/rtp-packet/packet';
import type { RtpIoKind } from '../../media-engine/worker/rtp-transport';
import { bridgedPair } from '../../testkit/media-engine/bridged-pair';
import { pcmuOffer, portRange, sleep, tmpDir, bindRtpPair } from '../../testkit/media-engine/support';

/** the far end's offer: PCMU at 20 ms with RFC 4733 digits */
const offer = (port: number): string => pcmuOffer(port, '127.0.0.1', true);

interface Got {
  seq: number;
  ts: number;
  ssrc: number;
  pt: number;
  first: number;
}

/** A far end: RTP on a port, RTCP on the next, what each got. */
class Far {
  readonly got: Got[] = [];
  readonly rtcp: Buffer[] = [];
  private constructor(
    readonly rtpSock: dgram.Socket,
    readonly rtcpSock: dgram.Socket,
  ) {
    rtpSock.on('message', (m) => this.got.push({ seq: m.readUInt16BE(2), ts: m.readUInt32BE(4), ssrc: m.readUInt32BE(8), pt: m[1] & 0x7f, first: m[12] }));
    rtcpSock.on('message', (m) => this.rtcp.push(m));
  }
  static async open(): Promise<Far> {
    return new Far(...(await bindRtpPair()));
  }
  get port(): number {
    return this.rtpSock.address().port;
  }
  send(to: number, seq: number, ts: number, ssrc: number, byte: number, pt = 0, payload?: Uint8Array): void {
    const p = payload ?? new Uint8Array(160).fill(byte);
    const b = Buffer.alloc(12 + p.length);
    writeRtpInto(b, false, pt, seq & 0xffff, ts | 0, ssrc | 0, p, p.length);
    this.rtpSock.send(b, to, '127.0.0.1');
  }
  /** Resolves true once a packet with payload byte `byte` comes, false after `ms` without one (its timer cleared either way). */
  hears(byte: number, ms: number): Promise<boolean> {
    if (this.got.some((g) => g.first === byte)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (yes: boolean) => {
        clearTimeout(timer);
        this.rtpSock.off('message', onMessage);
        resolve(yes);
      };
      const onMessage = (m: Buffer) => {
        if (m[12] === byte) done(true);
      };
      const timer = setTimeout(() => done(false), ms);
      this.rtpSock.on('message', onMessage);
    });
  }
  close(): void {
    this.rtpSock.close();
    this.rtcpSock.close();
  }
}

/** µ-law bytes that survive decode → encode unchanged (not 0x7f/0xff, the two zeros) and are not silence; unique for k < 120 */
const byteOf = (k: number) => 1 + (k % 120);

/** The payload bytes B got that are not silence (0xff), in order (after the far end stops, three concealed frames). */
const heard = (f: Far) => f.got.filter((g) => g.pt === 0 && g.first !== 0xff).map((g) => g.first);

/**
 * B's stream from the engine is one stream: one SSRC, each packet the next sequence number, timestamps
 * 20 ms apart (or a multiple: a worker that stalled on a loaded machine skips the ticks it missed).
 */
function expectContiguous(f: Far): void {
  const steps = f.got.slice(1).map((g, i) => [(g.seq - f.got[i].seq) & 0xffff, (g.ts - f.got[i].ts) >>> 0]);
  const bad = steps.filter(([s, t]) => s !== 1 || t === 0 || t % 160 !== 0);
  expect(bad, JSON.stringify(bad)).to.deep.equal([]);
  expect(new Set(f.got.map((g) => g.ssrc)).size).to.equal(1);
}

/** Sends `plan` (packet numbers, in sending order; one step per 20 ms) from A, packet k with byte(k). */
async function stream(a: Far, to: number, plan: number[][], ssrc = 0x11223344, seq0 = 1000, ts0 = 5000, byte = byteOf): Promise<void> {
  const t0 = performance.now();
  for (let i = 0; i < plan.length; i++) {
    for (const k of plan[i]) a.send(to, seq0 + k, ts0 + k * 160, ssrc, byte(k));
    // on a fixed schedule (a sleep per step would drift slower than the far end's clock)
    await sleep(t0 + (i + 1) * 20 - performance.now());
  }
}

/** The longest run of `got` that is `want` in order (some of it skipped): the audio that came through as sent. */
function inOrder(got: number[], want: number[]): number {
  const at = new Map(want.map((v, i) => [v, i]));
  const tails: number[] = []; // patience sort: the longest strictly increasing run of positions in `want`
  for (const v of got) {
    const i = at.get(v);
    if (i === undefined) continue;
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (tails[mid] < i) lo = mid + 1;
      else hi = mid;
    }
    tails[lo] = i;
  }
  return tails.length;
}

/**
 * What B heard is what A sent, in order: every frame of `want` but those the jitter buffer counted as
 * late (a loaded machine delays the far end's timer) or stalled (a stall of the worker), and nothing else but concealed frames.
 */
function expectHeard(got: number[], want: number[], st: { late: number; stalled: number; concealed: number }): void {
  const run = inOrder(got, want);
  expect(run, `${want.length - run} frames missing, ${st.late} late, ${st.stalled} in a stall: ${JSON.stringify(got)}`).to.be.at.least(want.length - st.late - st.stalled);
  expect(got.length - run, `frames that are not the stream: ${JSON.stringify(got)}`).to.be.at.most(st.concealed);
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => [from + i]);

const CONFIGS: { name: string; rtpIo: RtpIoKind; inC: boolean }[] = [
  { name: 'uring, plain legs in C', rtpIo: 'uring', inC: true },
  { name: 'uring, every leg in JS', rtpIo: 'uring', inC: false },
  { name: 'native (per-socket), JS legs', rtpIo: 'native', inC: false },
];

describe('media-engine plain G.711 legs in C and in JS: the same behaviour', function () {
  this.timeout(60_000);

  for (const cfg of CONFIGS) {
    describe(cfg.name, () => {
      let ms: MediaServer;
      let a: Far;
      let b: Far;
      let epA: Endpoint;
      let epB: Endpoint;
      const cLegs = async () => (await ms.stats())[0].cLegs;

      before(async () => {
        ms = await MediaServer.start({ rtpPorts: portRange(), workers: 1, rtpIo: cfg.rtpIo, plainLegsInC: cfg.inC });
      });
      beforeEach(async () => {
        a = await Far.open();
        b = await Far.open();
        ({ epA, epB } = await bridgedPair(ms, a.port, b.port, { inC: cfg.inC, offer }));
      });
      afterEach(async () => {
        await epA.destroy().catch(() => undefined);
        await epB.destroy().catch(() => undefined);
        a.close();
        b.close();
      });
      after(async () => ms.destroy());

      it('reordered and duplicated packets come out in order once; a lost one is counted; the stream out is contiguous', async () => {
        // 60 packets; 10/11 and 30/31 swapped, 20 sent twice, 40 never sent
        const plan = range(0, 60).map(([k]) => (k === 10 ? [11] : k === 11 ? [10] : k === 30 ? [31] : k === 31 ? [30] : k === 20 ? [20, 20] : k === 40 ? [] : [k]));
        await stream(a, epA.local.port, plan);
        await sleep(300);
        const want = range(0, 60)
          .map(([k]) => k)
          .filter((k) => k !== 40)
          .map(byteOf);
        const st = await epA.getStats();
        // the lost packet is concealed (the frame before, faded), the rest in order, once each
        expectHeard(heard(b), want, st);
        expect(st.packetsReceived).to.equal(59);
        expect(st.lost).to.equal(1);
        expect(st.duplicates).to.equal(1);
        expect(st.outOfOrder).to.equal(2);
        expect(st.concealed).to.be.at.least(1);
        expectContiguous(b);
        expect(await cLegs()).to.equal(cfg.inC ? 2 : 0);
      });

      it('a far end falling behind the clock is heard: no second of it dropped', async () => {
        // 50 packets on time, then 56 sent 4 in the time of 5 frames (280 ms behind at the end): past its
        // widest (160 ms) the jitter buffer finds each late; it starts again from one rather than dropping
        // them until a second behind (byteOf tells 120 packets apart)
        const slow = Array.from({ length: 70 }, (_, i) => (i % 5 === 4 ? [] : [50 + i - Math.floor(i / 5)]));
        await stream(a, epA.local.port, [...range(0, 50), ...slow]);
        await sleep(300);
        const loud = b.got.map((g) => g.pt === 0 && g.first !== 0xff);
        const from = loud.indexOf(true);
        const to = loud.lastIndexOf(true);
        let run = 0;
        let longest = 0;
        for (let i = from; i <= to; i++) longest = Math.max(longest, (run = loud[i] ? 0 : run + 1));
        const st = await epA.getStats();
        expect(longest, `the longest silence (packets); late ${st.late}, target ${st.jitterTargetFrames}`).to.be.at.most(10);
        // the packets dropped: those that came late while it grew to its widest (6 frames), and a few a
        // loaded machine's timers add; dropped once 160 ms behind, a quarter of them went unheard
        const inOrderHeard = inOrder(
          heard(b),
          range(0, 106).map(([k]) => byteOf(k)),
        );
        expect(inOrderHeard, `heard in order of 106; late ${st.late}`).to.be.at.least(106 - 12);
        expectContiguous(b);
        expect(await cLegs()).to.equal(cfg.inC ? 2 : 0);
      });

      it("a burst past the jitter buffer's capacity (a path that held 1.5 s of packets): what follows is heard as it comes", async () => {
        // 10 packets on time; the path stalls 1.5 s (the buffer empties and starts over: 50 frames
        // concealed), then delivers the 75 packets it held at once, more than the buffer's capacity (40),
        // and A talks on for 2.2 s. Left at the burst's first packet, the playout point was behind every
        // packet the buffer kept, each new one pushing the oldest out: nothing played while A talked.
        // The resumed talk is byteOf(0..109); what came before, 200 (a loud µ-law byte of its own).
        const stall: number[][] = Array.from({ length: 75 }, () => []);
        const burst = range(10, 85).map(([k]) => k);
        const resumed = range(0, 110).map(([j]) => byteOf(j));
        await stream(a, epA.local.port, [...range(0, 10), ...stall, burst, ...range(85, 195)], undefined, undefined, undefined, (k) => (k < 85 ? 200 : byteOf(k - 85)));
        const whileTalking = heard(b);
        // the rest of what it holds (up to its capacity, 800 ms) plays out
        await b.hears(byteOf(109), 40 * 20 + 500);
        const st = await epA.getStats();
        // as A talked: all but what the buffer may still hold (its capacity, and 10 frames of a loaded machine)
        const early = resumed.slice(0, 110 - 50);
        expect(inOrder(whileTalking, early), `heard while A talked, of ${early.length}; late ${st.late}, stalled ${st.stalled}: ${JSON.stringify(whileTalking)}`).to.be.at.least(
          early.length - st.late - st.stalled,
        );
        expect(inOrder(heard(b), resumed), `heard in order of ${resumed.length}; late ${st.late}, stalled ${st.stalled}`).to.be.at.least(resumed.length - st.late - st.stalled);
        expect(st.dropped, 'the burst past the depth dropped').to.be.at.least(75 - 40);
        expectContiguous(b);
        expect(await cLegs()).to.equal(cfg.inC ? 2 : 0);
      });

      // the old source's tail still in the jitter buffer when the new one came is dropped with it: as many
      // frames as the buffer held then (its target, one more while a packet waits for its pop); a buffer
      // grown by a late packet (or by a loaded machine's timers) holds more of it
      const oldPlans: [string, number[][]][] = [
        ['', range(0, 20)],
        [' (a buffer grown by a late packet first)', [...range(0, 5), [], [], [], [], [5, 6, 7, 8, 9], ...range(10, 20)]],
      ];
      for (const [what, oldPlan] of oldPlans) {
        it(`an SSRC change restarts the source: the new stream is heard from its first packet${what}`, async () => {
          await stream(a, epA.local.port, oldPlan);
          await stream(a, epA.local.port, range(20, 40), 0x55667788, 40000, 900000);
          await sleep(300);
          const st = await epA.getStats();
          const got = heard(b);
          const lastOld = Math.max(-1, ...range(0, 20).map(([k]) => (got.includes(byteOf(k)) ? k : -1)));
          const dropped = 19 - lastOld;
          expect(dropped, `old frames dropped at the change (the buffer's target ${st.jitterTargetFrames}): ${JSON.stringify(got)}`).to.be.within(1, st.jitterTargetFrames + 1);
          const want = range(0, 40)
            .map(([k]) => k)
            .filter((k) => k <= lastOld || k >= 20)
            .map(byteOf);
          expectHeard(got, want, st);
          if (what && st.stalled === 0) expect(st.jitterTargetFrames, 'the late packet grew the buffer').to.be.at.least(3);
          else if (what) console.log(`      ${st.stalled} frames in a stall of the worker: the growth (target ${st.jitterTargetFrames}) not judged`);
          expect(st.packetsReceived, 'from the current source').to.equal(20);
          expect(st.lost).to.equal(0);
        });
      }

      it('RFC 4733 digits are reported once each, with their duration', async () => {
        const digits: { dtmf: string; duration: number; source: string }[] = [];
        epA.on('dtmf', (d: { dtmf: string; duration: number; source: string }) => digits.push(d));
        const ev = (event: number, end: boolean, dur: number) => new Uint8Array([event, (end ? 0x80 : 0) | 10, dur >> 8, dur & 0xff]);
        let seq = 1;
        const send = (tsOf: number, e: Uint8Array) => a.send(epA.local.port, seq++, tsOf, 0x1234, 0, 101, e);
        for (const [event, ts] of [
          [5, 16000],
          [11, 32000],
        ]) {
          for (let d = 160; d <= 800; d += 160) {
            send(ts, ev(event, false, d));
            await sleep(20);
          }
          for (let i = 0; i < 3; i++) send(ts, ev(event, true, 960)); // the end, three times
          await sleep(60);
        }
        await sleep(200);
        expect(digits.map((d) => [d.dtmf, d.duration, d.source])).to.deep.equal([
          ['5', 120, 'rfc2833'],
          ['#', 120, 'rfc2833'],
        ]);
        expect(await cLegs()).to.equal(cfg.inC ? 2 : 0);
      });

      it('a digit that ended just before its leg moved to JS is reported, once', async () => {
        const digits: string[] = [];
        epA.on('dtmf', (d: { dtmf: string }) => digits.push(d.dtmf));
        const ev = (event: number, end: boolean, dur: number) => new Uint8Array([event, (end ? 0x80 : 0) | 10, dur >> 8, dur & 0xff]);
        let seq = 1;
        const events = [1, 2, 3, 4, 5, 6, 7, 8, 9];
        for (const [i, event] of events.entries()) {
          const ts = 16000 + i * 16000;
          for (const d of [160, 320]) {
            a.send(epA.local.port, seq++, ts, 0x1234, 0, 101, ev(event, false, d));
            await sleep(20);
          }
          for (let k = 0; k < 3; k++) a.send(epA.local.port, seq++, ts, 0x1234, 0, 101, ev(event, true, 480));
          // the end is taken in by the next tick; the move to JS (an operation on the leg) comes in the
          // tick after, before that tick hands the digit out
          await sleep(5 + i * 5);
          await epA.mute('out');
          await epA.unmute('out');
          await sleep(200);
        }
        await sleep(400);
        expect(digits).to.deep.equal(events.map(String));
      });

      it("RTCP: the engine's report to A carries A's loss; the statistics agree", async function () {
        this.timeout(20_000);
        // 8 lost of 400; two packets ahead of the schedule, so that this process's timer, late on a
        // loaded machine, makes no packet late for the jitter buffer (a frame ahead of time is kept)
        const plan = range(0, 398).map(([i]) => (i === 0 ? [0, 1, 2] : [i + 2]).filter((k) => k % 50 !== 7));
        await stream(a, epA.local.port, plan);
        const deadline = Date.now() + 8000;
        const report = () =>
          a.rtcp
            .map((m) => parseRtcp(m))
            .flatMap((p) => p ?? [])
            .flatMap((p) => (p.type === 'SR' || p.type === 'RR' ? p.reports : []))
            .find((r) => r.ssrc === 0x11223344 && r.cumulativeLost > 0);
        while (!report() && Date.now() < deadline) await sleep(100);
        const r = report();
        await sleep(300); // the last packets reach the worker's next ticks
        expect(r, 'a report block on A with its loss').to.not.equal(undefined);
        expect(r!.cumulativeLost).to.be.within(1, 8);
        const st = await epA.getStats();
        expect(st.lost).to.equal(8);
        expect(st.packetsReceived).to.equal(392);
        expect(st.jitterMs).to.be.below(20);
        // a frame arriving in time is never late, however often the leg's RTCP moved it between C and JS
        expect(st.late, 'frames counted late').to.equal(0);
      });

      // the JS buffer's rule is tested in jitter.test.ts; here the C one's, on a real leg
      if (cfg.inC)
        it('the frame the jitter buffer grew for a late packet is given back after 10 s on time, at a pause', async function () {
          this.timeout(90_000);
          // A answers each packet the engine sends it with its next one (the engine's clock paces it):
          // speech, but for 3 silent packets in every 100 from packet 600 on (the calm is due at about
          // 540: the frame waits for the pause); packet 20 comes 15 packets late: too late to play, the
          // buffer grows a frame. A stall of this process or of the machine can make more packets late:
          // the buffer grows again and each frame it grew needs its own calm 10 s and pause. So what is
          // judged is that no frame is given back during speech (the least of its depths sampled then is
          // still the grown one) and that all come back at pauses: A goes on until they have, for at
          // most 60 s (three frames grown).
          // (µ-law bytes 1-60 are loud: exponent 4-7; byteOf's up to 120 reach quiet ones)
          const silence = new Uint8Array(160).fill(0xff);
          const speech = (n: number) => new Uint8Array(160).fill(1 + (n % 60));
          const send = (n: number) => a.send(epA.local.port, 1000 + n, 5000 + n * 160, 0x11223344, 0, 0, n >= 600 && n % 100 < 3 ? silence : speech(n));
          let k = 0;
          let first = -1;
          let grown = -1;
          let keptLeast = Infinity;
          let back = false;
          const done = new Promise<void>((resolve) => {
            a.rtpSock.on('message', () => {
              if (back || k >= 3000) return resolve();
              if (k !== 20) send(k);
              if (k === 35) send(20);
              if (k === 10) void epA.getStats().then((st) => (first = st.jitterTargetFrames));
              if (k === 100) void epA.getStats().then((st) => (grown = st.jitterTargetFrames));
              if (k > 100 && k < 600 && (k % 50 === 0 || k === 595)) void epA.getStats().then((st) => (keptLeast = Math.min(keptLeast, st.jitterTargetFrames)));
              if (k > 600 && k % 50 === 0) void epA.getStats().then((st) => (back ||= st.jitterTargetFrames === first));
              k++;
            });
          });
          await done;
          expect(grown, 'grown by the late packet').to.be.greaterThan(first);
          expect(keptLeast, 'kept over 10 s of speech').to.be.at.least(grown).and.below(Infinity);
          const st = await epA.getStats();
          expect(st.late).to.be.at.least(1);
          expect(st.jitterTargetFrames, `after ${k} packets`).to.equal(first);
          expect(st.dropped, 'the frames given back, each a silent one skipped').to.be.at.least(grown - first);
          expect(await cLegs()).to.equal(cfg.inC ? 2 : 0);
        });

      it('a leg that moves to JS for a recording and back keeps its stream: no gap, no sequence jump', async () => {
        const dir = tmpDir();
        const sending = stream(a, epA.local.port, range(0, 120));
        await sleep(800);
        const rec = epA.record(path.join(dir, 'r.wav'));
        await sleep(200);
        expect(await cLegs(), 'in JS while it records').to.equal(0);
        await sleep(600);
        await epA.stopRecord();
        await rec;
        await sleep(200);
        expect(await cLegs(), 'back in C once it stopped').to.equal(cfg.inC ? 2 : 0);
        await sending;
        await sleep(300);
        const st = await epA.getStats();
        expectHeard(
          heard(b),
          range(0, 120).map(([k]) => byteOf(k)),
          st,
        );
        expectContiguous(b);
        expect(st.packetsReceived).to.equal(120);
      });
    });
  }
});
