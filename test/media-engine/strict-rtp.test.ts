/**
 * Strict RTP against real loopback sockets (media-engine/worker/rtp-source.ts, native/rtp_legs.c `admit`), the same
 * checks with the C legs on, off and on the per-socket native kind, as c-legs.test.ts runs its own. A far end A talks
 * to endpoint epA, bridged to epB, whose far end B hears what epA decoded: each packet A sends carries its own
 * payload byte, so B's packets show whose audio got in. An attacker X sends from another port (or another address,
 * 127.0.0.2) straight to epA's port with an SSRC and a loud byte of its own, as anyone who can reach the port can.
 * The decisions packet by packet, on virtual time: strict-rtp-source.test.ts.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import { MediaServer, type Endpoint } from '../../media-engine';
import { serializeSenderReport } from '../../media-engine/rtp-packet/rtcp';
import { writeRtpInto } from '../../media-engine/rtp-packet/packet';
import { RELATCH_AFTER_MS } from '../../media-engine/worker/rtp-source';
import type { RtpIoKind } from '../../media-engine/worker/rtp-transport';
import { bridgedPair, statsWhen } from '../../testkit/media-engine/bridged-pair';
import { within } from '../../testkit/poll';
import { pcmuOffer, portRange, sleep, tmpDir } from '../../testkit/media-engine/support';
import { freePort, sippMediaPort, udpBound } from '../../testkit/ports';
import { pcmuPackets, rtpPcap } from '../../testkit/rtp-pcap';
import { sippResult } from '../../testkit/sipp-process';

const SSRC_A = 0x11223344;
const SSRC_X = 0x0bad0bad;
/** the attacker's payload byte: loud µ-law that survives decode → encode, outside byteOf's values */
const X_BYTE = 200;

/** A UDP socket on `host` (a free port of this shard's share) that sends RTP and keeps the payload byte of every RTP packet it gets. */
class Party {
  readonly got: number[] = [];
  readonly errors: Error[] = [];
  private constructor(readonly sock: dgram.Socket) {
    sock.on('message', (m) => {
      if (m.length > 12 && (m[1] & 0x7f) === 0) this.got.push(m[12]);
    });
  }
  static async open(host = '127.0.0.1'): Promise<Party> {
    const sock = dgram.createSocket('udp4');
    const p = new Party(sock);
    sock.on('error', (e) => p.errors.push(e));
    const port = await sippMediaPort(host);
    await new Promise<void>((r) => sock.bind(port, host, r));
    return p;
  }
  get port(): number {
    return this.sock.address().port;
  }
  send(to: number, seq: number, ts: number, ssrc: number, byte: number): void {
    const b = Buffer.alloc(12 + 160);
    writeRtpInto(b, false, 0, seq & 0xffff, ts | 0, ssrc | 0, new Uint8Array(160).fill(byte), 160);
    this.sock.send(b, to, '127.0.0.1');
  }
  close(): void {
    this.sock.close();
  }
}

/** µ-law bytes that survive decode → encode unchanged and are not silence; unique for k < 120 */
const byteOf = (k: number) => 1 + (k % 120);
/** what B got that is not silence (0xff), in order */
const heard = (b: Party) => b.got.filter((g) => g !== 0xff);

/** Sends packets `from`..`to` - 1 from `p` (sequence 1000 + k, byte `byte(k)`), 20 ms apart on a fixed schedule; `also(k)` after each. */
async function talk(p: Party, port: number, from: number, to: number, o: { ssrc?: number; byte?: (k: number) => number; also?: (k: number) => void } = {}): Promise<void> {
  const t0 = performance.now();
  for (let k = from; k < to; k++) {
    p.send(port, 1000 + k, 5000 + k * 160, o.ssrc ?? SSRC_A, (o.byte ?? byteOf)(k));
    o.also?.(k);
    await sleep(t0 + (k - from + 1) * 20 - performance.now());
  }
}

/** How many of `want` B heard in order (skips allowed): the longest increasing run of their positions. */
function inOrder(got: number[], want: number[]): number {
  const at = new Map(want.map((v, i) => [v, i]));
  let last = -1;
  let n = 0;
  for (const v of got) {
    const i = at.get(v);
    if (i !== undefined && i > last) {
      last = i;
      n++;
    }
  }
  return n;
}

/** the µ-law byte of the port-0 sender's audio */
const RAW_BYTE = 150;

/**
 * sipp playing 1 s of RAW_BYTE to `port` from a raw socket with UDP source port 0 (a pcap recorded so, as the PBX
 * suites' callers), once it gets an INVITE naming that port (sent from `via`): resolves with its exit code and errors.
 */
async function playFromPort0(via: dgram.Socket, port: number): Promise<{ code: number | null; errors: string }> {
  const dir = tmpDir(); // removed by sippResult at sipp's exit
  const pcap = path.join(dir, 'port0.pcap');
  fs.writeFileSync(pcap, rtpPcap(pcmuPackets(new Uint8Array(160 * 50).fill(RAW_BYTE), false), { ssrc: 0x1234abcd, srcPort: 0, dstPort: 6000, ipChecksum: true }));
  const scenario = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="play-from-port-0">
<recv request="INVITE"/>
<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>
<pause milliseconds="1500"/>
</scenario>`;
  fs.writeFileSync(path.join(dir, 'scenario.xml'), scenario);
  const sipPort = await freePort();
  const args = ['-sf', 'scenario.xml', '-i', '127.0.0.1', '-p', String(sipPort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())];
  const proc = spawn('sipp', [...args, '-cp', String(await freePort()), '-nostdin', '-timeout', '20s', '-timeout_error', '-trace_err'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const done = sippResult(proc, dir, { killAfterMs: 25_000, messages: false, onExit: () => undefined });
  await udpBound(sipPort);
  const sdp = pcmuOffer(port);
  const from = via.address().port;
  const invite = [
    `INVITE sip:play@127.0.0.1:${sipPort} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${from};branch=z9hG4bK-port0-${sipPort}`,
    'From: <sip:test@127.0.0.1>;tag=port0',
    'To: <sip:play@127.0.0.1>',
    `Call-ID: port0-${sipPort}@127.0.0.1`,
    'CSeq: 1 INVITE',
    `Contact: <sip:test@127.0.0.1:${from}>`,
    'Max-Forwards: 70',
    'Content-Type: application/sdp',
    `Content-Length: ${Buffer.byteLength(sdp)}`,
    '',
    sdp,
  ].join('\r\n');
  via.send(invite, sipPort, '127.0.0.1');
  const r = await done;
  return { code: r.code, errors: r.errors + r.stderr };
}

const CONFIGS: { name: string; rtpIo: RtpIoKind; inC: boolean }[] = [
  { name: 'uring, plain legs in C', rtpIo: 'uring', inC: true },
  { name: 'uring, every leg in JS', rtpIo: 'uring', inC: false },
  { name: 'native (per-socket), JS legs', rtpIo: 'native', inC: false },
];

describe('media-engine strict RTP: a latched leg takes RTP and RTCP from its source only (JS and C legs)', function () {
  this.timeout(60_000);

  for (const cfg of CONFIGS) {
    describe(cfg.name, () => {
      let ms: MediaServer;
      let a: Party;
      let b: Party;
      let x: Party;
      let epA: Endpoint;
      let epB: Endpoint;
      const cLegs = async () => (await ms.stats())[0].cLegs;
      const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => byteOf(from + i));

      before(async () => {
        ms = await MediaServer.start({ rtpPorts: portRange(), workers: 1, rtpIo: cfg.rtpIo, plainLegsInC: cfg.inC });
      });
      beforeEach(async () => {
        [a, b, x] = [await Party.open(), await Party.open(), await Party.open()];
        ({ epA, epB } = await bridgedPair(ms, a.port, b.port, { inC: cfg.inC }));
      });
      /** epA's stats once it took `received` packets of the current source and dropped `dropped`, and B heard `last` */
      const settled = async (received: number, dropped: number, last?: number) => {
        const st = await statsWhen(epA, (s) => s.packetsReceived === received && s.foreignDropped === dropped);
        if (last !== undefined) await within(() => heard(b).includes(last)); // (a frame late is not heard: the expectations allow for it)
        return st;
      };
      afterEach(async () => {
        await epA.destroy().catch(() => undefined);
        await epB.destroy().catch(() => undefined);
        for (const p of [a, b, x]) p.close();
        expect([a, b, x].flatMap((p) => p.errors)).to.deep.equal([]);
      });
      after(async () => ms.destroy());

      it("latched to A: an attacker's RTP from another port (another SSRC, its own audio) is dropped and counted; B hears A only", async () => {
        // from A's 10th packet on, X sends one of its own between each two of A's
        await talk(a, epA.local.port, 0, 60, { also: (k) => k >= 10 && x.send(epA.local.port, 7000 + k, 90000 + k * 160, SSRC_X, X_BYTE) });
        const st = await settled(60, 50, byteOf(59));
        const got = heard(b);
        expect(got.filter((v) => v === X_BYTE).length, `the attacker's audio heard: ${JSON.stringify(got)}`).to.equal(0);
        // the jitter buffer was never reset by X's SSRC: all of A in order, but what a loaded machine made late
        expect(inOrder(got, range(0, 60)), `A heard in order: ${JSON.stringify(got)}`).to.be.at.least(60 - st.late - st.stalled);
        expect(st.packetsReceived, "A's statistics: its own packets only").to.equal(60);
        expect([st.lost, st.duplicates, st.outOfOrder]).to.deep.equal([0, 0, 0]);
        expect(st.jitterMs, 'X did not enter the jitter estimate').to.be.below(10);
        expect(st.foreignDropped).to.equal(50);
        expect(x.got.length, 'epA never sent to the attacker').to.equal(0);
        expect(await cLegs()).to.equal(cfg.inC ? 2 : 0);
      });

      it('A quiet past the re-latch time: one attacker packet does not take the call; a stream in sequence does, from its 4th packet', async function () {
        this.timeout(20_000);
        await talk(a, epA.local.port, 0, 20);
        await settled(20, 0);
        // the arrival times are the kernel's (SO_TIMESTAMP, compared with performance.now()): the re-latch time passes in real time
        await sleep(RELATCH_AFTER_MS + 300);
        x.send(epA.local.port, 7000, 90000, SSRC_X, X_BYTE);
        await settled(20, 1);
        await talk(a, epA.local.port, 20, 40); // A again, where it left off: heard, still answered
        let st = await settled(40, 1, byteOf(39));
        expect(heard(b).filter((v) => v === X_BYTE).length, 'the single packet heard').to.equal(0);
        expect(x.got.length, 'epA turned to the attacker').to.equal(0);
        expect(st.foreignDropped).to.equal(1);
        // A goes quiet again; a new source streams in sequence (bytes of its own): latched after its probation
        await sleep(RELATCH_AFTER_MS + 300); // real time, as above
        const xBytes = (k: number) => 0x81 + k; // positive µ-law: no concealed frame of A (negative) comes out as one
        await talk(x, epA.local.port, 0, 20, { ssrc: SSRC_X, byte: xBytes });
        const [toA, toX] = [a.got.length, x.got.length];
        st = await settled(17, 1 + 3, xBytes(19)); // its SSRC restarted the statistics
        await within(() => x.got.length - toX > 8); // epA goes on sending, to the new source
        const got = heard(b);
        const dropped = [0, 1, 2].map(xBytes);
        expect(
          got.filter((v) => dropped.includes(v)),
          'the packets of its probation are not heard',
        ).to.deep.equal([]);
        expect(
          inOrder(
            got,
            Array.from({ length: 17 }, (_, i) => xBytes(i + 3)),
          ),
          `the new source heard: ${JSON.stringify(got)}`,
        ).to.be.at.least(17 - st.late - st.stalled);
        expect(x.got.length - toX, 'epA answers to the new source').to.be.greaterThan(8);
        expect(a.got.length - toA, 'and no longer to A').to.be.at.most(1);
        expect(st.foreignDropped).to.equal(1 + 3);
      });

      it('a far end behind a NAT (not at its SDP port) is latched after 4 packets in sequence, not by one out of sequence', async () => {
        const nat = await Party.open();
        try {
          // a stray packet, then one far out of sequence: each starts the probation over
          nat.send(epA.local.port, 50, 100, SSRC_A, X_BYTE);
          nat.send(epA.local.port, 900, 200, SSRC_A, X_BYTE);
          await talk(nat, epA.local.port, 0, 30);
          const st = await settled(27, 2 + 3, byteOf(29));
          const got = heard(b);
          expect(got.filter((v) => [X_BYTE, byteOf(0), byteOf(1), byteOf(2)].includes(v)).length, `heard before its probation ended: ${JSON.stringify(got)}`).to.equal(0);
          expect(inOrder(got, range(3, 30))).to.be.at.least(27 - st.late - st.stalled);
          expect(st.foreignDropped).to.equal(2 + 3);
          expect(nat.got.length, 'answered where it sends from').to.be.greaterThan(15);
          expect(nat.errors).to.deep.equal([]);
        } finally {
          nat.close();
        }
      });

      /**
       * A back with packets `from`..`to` (positive µ-law bytes: nothing heard of A or X before, nor their concealed frames, is
       * one) while X, in sequence from its packet `xFrom`, keeps sending: A is heard and answered from its first, X dropped.
       */
      const aBackBesideX = async (from: number, to: number, xFrom: number, before: { dropped: number }) => {
        const back = (k: number) => 0x81 + (k % 60);
        const ours = Array.from({ length: to - from }, (_, i) => back(from + i));
        const [toA, toX] = [a.got.length, x.got.length];
        const xAlso = (k: number) => x.send(epA.local.port, 1000 + xFrom + k - from, 5000 + (xFrom + k - from) * 160, SSRC_X, X_BYTE);
        await talk(a, epA.local.port, from, to, { byte: back, also: xAlso });
        const st = await settled(to - from, before.dropped + (to - from), back(to - 1)); // A's SSRC restarted the statistics
        const got = heard(b);
        const since = got.slice(
          Math.max(
            0,
            got.findIndex((v) => ours.includes(v)),
          ),
        );
        expect(since.filter((v) => v === X_BYTE).length, `X heard once A was back: ${JSON.stringify(got)}`).to.equal(0);
        expect(inOrder(since, ours), `A heard: ${JSON.stringify(got)}`).to.be.at.least(to - from - st.late - st.stalled);
        expect(a.got.length - toA, 'epA answers A again').to.be.greaterThan((to - from) / 2);
        expect(x.got.length - toX, 'and no longer X').to.be.at.most(1);
      };

      it("a source that took the latch in A's silence (hold, DTX) yields to A, the SDP address, at its first packet back", async function () {
        this.timeout(20_000);
        await talk(a, epA.local.port, 0, 10);
        await settled(10, 0);
        // the arrival times are the kernel's (SO_TIMESTAMP, compared with performance.now()): the re-latch time passes in real time
        await sleep(RELATCH_AFTER_MS + 300);
        await talk(x, epA.local.port, 0, 10, { ssrc: SSRC_X, byte: () => X_BYTE });
        await settled(7, 3);
        expect(x.got.length, 'X latched after its probation').to.be.greaterThan(0);
        await aBackBesideX(10, 40, 10, { dropped: 3 });
      });

      it('a source that passed its probation before the SDP address sent yields to it at its first packet', async () => {
        await talk(x, epA.local.port, 0, 10, { ssrc: SSRC_X, byte: () => X_BYTE });
        await settled(7, 3);
        expect(x.got.length, 'X latched after its probation').to.be.greaterThan(0);
        await aBackBesideX(0, 30, 10, { dropped: 3 });
      });

      it('an SDP naming a host (c=IN IP4 localhost): A is the signalled source once the name resolves, taking the latch back from X', async () => {
        await epA.destroy();
        await epB.destroy();
        ({ epA, epB } = await bridgedPair(ms, a.port, b.port, { inC: cfg.inC, offer: (port) => pcmuOffer(port, 'localhost') }));
        await talk(x, epA.local.port, 0, 10, { ssrc: SSRC_X, byte: () => X_BYTE });
        await settled(7, 3);
        expect(x.got.length, 'X latched after its probation').to.be.greaterThan(0);
        await aBackBesideX(0, 30, 10, { dropped: 3 });
      });

      it('a raw-socket sender with UDP source port 0 (sipp pcap play) is heard while nothing is latched, and never latched to', async function () {
        this.timeout(30_000);
        const toA = a.got.length;
        const r = await playFromPort0(x.sock, epA.local.port);
        expect(r.code, r.errors).to.equal(0);
        const st = await settled(50, 0);
        const got = heard(b);
        expect(got.filter((v) => v === RAW_BYTE).length, `B heard the raw sender: ${JSON.stringify(got)}`).to.be.at.least(50 - st.late - st.stalled - 3);
        expect(st.packetsReceived).to.equal(50);
        expect(st.foreignDropped).to.equal(0);
        // epA sent to the SDP's address all along (sipp's 1.5 s): not latched to a port it cannot answer
        expect(a.got.length - toA, 'sent to the SDP address meanwhile').to.be.greaterThan(40);
        expect(x.got.length).to.equal(0);
        expect(await cLegs()).to.equal(cfg.inC ? 2 : 0);
      });

      it("RTCP once latched: A's report is taken, another address's (on the RTCP port or multiplexed) dropped and counted", async () => {
        const far = await Party.open('127.0.0.2');
        try {
          await talk(a, epA.local.port, 0, 10);
          const sr = (ssrc: number) => serializeSenderReport(ssrc, { ntpSec: 1, ntpFrac: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5 });
          far.sock.send(sr(SSRC_X), epA.local.port + 1, '127.0.0.1');
          far.sock.send(sr(SSRC_X), epA.local.port, '127.0.0.1');
          x.sock.send(sr(SSRC_X), epA.local.port, '127.0.0.1'); // multiplexed, the latched address but not its port
          a.sock.send(sr(SSRC_A), epA.local.port, '127.0.0.1');
          await talk(a, epA.local.port, 10, 30); // a C leg hands RTCP on to JS at its ticks
          const st = await statsWhen(epA, (s) => s.packetsReceived === 30 && s.foreignDropped === 3 && s.rtcp.senderReports === 1);
          expect(st.rtcp.senderReports).to.equal(1);
          expect(st.rtcp.lastSender).to.deep.include({ ssrc: SSRC_A });
          expect(st.foreignDropped).to.equal(3);
          expect(far.errors).to.deep.equal([]);
        } finally {
          far.close();
        }
      });

      it("a flood of foreign RTCP costs no copy of a C leg's state per packet: dropped and counted from the latched address alone", async () => {
        const far = await Party.open('127.0.0.2');
        try {
          await talk(a, epA.local.port, 0, 5);
          await settled(5, 0);
          const sr = serializeSenderReport(SSRC_X, { ntpSec: 1, ntpFrac: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5 });
          const syncs0 = (await ms.stats())[0].cLegSyncs;
          // in bursts, each counted before the next: a burst at once fills no socket buffer (200 small datagrams at
          // once can overflow the default receive buffer while the worker is not scheduled, and the kernel drops them)
          const [FLOOD, BURST] = [200, 20];
          let reads = 0;
          let st!: Awaited<ReturnType<Endpoint['getStats']>>;
          for (let sent = BURST; sent <= FLOOD; sent += BURST) {
            for (let i = 0; i < BURST; i++) far.sock.send(sr, epA.local.port + 1, '127.0.0.1');
            reads++; // statsWhen's first read, which `done` does not see
            st = await statsWhen(epA, (s) => (reads++, s.foreignDropped >= sent));
            expect(st.foreignDropped, `after ${sent} sent`).to.equal(sent);
          }
          expect(st.foreignDropped).to.equal(FLOOD);
          expect(st.rtcp.senderReports).to.equal(0);
          // our own reads of the stats are the only whole copies (none at all for JS legs)
          expect((await ms.stats())[0].cLegSyncs - syncs0, `${reads} reads of the stats`).to.be.at.most(cfg.inC ? reads : 0);
          expect(far.errors).to.deep.equal([]);
        } finally {
          far.close();
        }
      });
    });
  }
});
