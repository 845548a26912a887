/**
 * The far end for the media benchmark, in its own process: one UDP socket per leg, sends a G.711
 * packet to every leg each 20 ms and timestamps every packet the engine sends back, to measure
 * the engine's send-time error and loss. Also serves as the echo server of the raw-UDP baseline.
 * With `legs` in the start command (codec-legs.ts) each leg sends its codec's packets of a tone,
 * encoded once up-front (codec-tone.ts), accepts its own payload type and reports whether the last
 * packets it got decode to the tone it expects.
 */
import dgram from 'node:dgram';
import { peer, type RtpTransport } from '../../../media-engine/worker/rtp-transport';
import { startUring, uringRing, uringTransport } from '../../../media-engine/worker/rtp-uring';
import { hearTone, isTone, tonePackets, TICKS_PER_FRAME, type LegSpec } from './codec-tone';
import { relayErrors } from './relay-timing';

/**
 * The legs' sockets. On the engine's own io_uring path (rtp-uring.ts, when it is built and the kernel
 * takes it) every packet is timed by the kernel's arrival stamp (SO_TIMESTAMPNS), so the send-time error
 * is the engine's as the kernel saw it, not this process's event loop catching up with 50,000 packets a
 * second at 1,000 legs; the ring is read every POLL_MS. Else, or with PEER_IO=dgram: node:dgram, each
 * packet timed when its 'message' event runs here.
 */
interface LegSocket {
  port: number;
  send(b: Buffer, port: number): void;
  close(): void;
}
const POLL_MS = 1;
const PEER_IO: 'uring' | 'dgram' = process.env.PEER_IO === 'dgram' || startUring() !== null ? 'dgram' : 'uring';
let poller: NodeJS.Timeout | null = null;

async function openLegSocket(onPacket: (msg: Buffer, len: number, arrival: number) => void): Promise<LegSocket> {
  if (PEER_IO === 'uring') {
    const t: RtpTransport = uringTransport((buf, len, _ip, _port, arrival) => onPacket(buf, len, arrival))!;
    await t.open('127.0.0.1', 0);
    if (!poller) poller = setInterval(() => uringRing()!.flush(), POLL_MS);
    const to = peer('127.0.0.1', 0);
    return {
      port: uringRing()!.io.localPort(t.ringFd!),
      send: (b, port) => t.send(b, { ...to, port }),
      close: () => void t.close(),
    };
  }
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  try {
    s.setRecvBufferSize(1 << 20);
  } catch {
    /* capped */
  }
  s.on('message', (msg) => onPacket(msg, msg.length, performance.now()));
  return { port: s.address().port, send: (b, port) => s.send(b, port, '127.0.0.1'), close: () => s.close() };
}

let sockets: LegSocket[] = [];
let echoes: dgram.Socket[] = [];
interface LegRx {
  base: number | null; // min over packets of (arrival - 20 ms * index)
  firstSeq: number | null;
  maxSeq: number;
  count: number;
  arrivals: number[];
  seqs: number[];
  /** the payload type accepted and RTP ticks per 20 ms (PCMU unless `legs` says otherwise) */
  pt: number;
  tpf: number;
  /** the last payloads received while measuring, kept with `legs` for the tone check */
  last: Buffer[] | null;
  /** `relay`: which packet of the replayed loop each received one is (-1: none of it), by its payload */
  loopIdx: number[];
}
/** payloads kept per leg for the tone check */
const KEEP = 12;
let rx: LegRx[] = [];
let measuring = false;
/**
 * `relay` (a forwarded pair, Opus↔Opus: the engine sends each packet on as it came, it cannot send before
 * it receives): the loop packet a payload is, and when each leg sent each of its packets. A relayed
 * packet's error is then its delay from its source's send, less the leg's least delay, instead of its place
 * on the 20 ms grid (which would count this process's own late sends as the engine's).
 */
let relayOf: Map<number, number> | null = null;
let sentAt: number[][] = [];

function send(m: unknown) {
  process.send!(m);
}

/** A payload's FNV-1a hash (a number: no string made per packet in the receive handler); `start` checks the loop's packets differ by it. */
function payloadKey(b: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h >>> 0;
}

type PeerCommand = { cmd: string; n?: number; targets?: number[]; durationMs?: number; warmupMs?: number; legs?: LegSpec[]; ms?: number; relay?: boolean };

/** The parent's commands (codec-legs.ts, run.ts), each with its handler; an unknown one is ignored. */
const COMMANDS = new Map<string, (m: PeerCommand) => Promise<void> | void>([
  ['open', openLegs],
  ['start', start],
  ['close', closeAll],
  ['echo', echo],
  // this process's event loop held busy (a test of the timing: the engine was not late, this process was)
  ['stall', (m) => stall(m.ms!)],
  ['exit', () => process.exit(0)],
]);

async function onMessage(m: PeerCommand): Promise<void> {
  await COMMANDS.get(m.cmd)?.(m);
}

/** `n` legs' sockets, each timing the packets of its payload type while measuring; answers their ports. */
async function openLegs(m: PeerCommand): Promise<void> {
  sockets = [];
  rx = [];
  for (let i = 0; i < m.n!; i++) {
    const leg: LegRx = { base: null, firstSeq: null, maxSeq: 0, count: 0, arrivals: [], seqs: [], pt: 0, tpf: 160, last: null, loopIdx: [] };
    rx.push(leg);
    const s = await openLegSocket((msg, len, t) => {
      if (!measuring || len < 12) return;
      if ((msg[1] & 0x7f) !== leg.pt) return; // only the leg's audio packets (PCMU by default)
      if (leg.last) {
        if (leg.last.length >= KEEP) leg.last.shift();
        leg.last.push(Buffer.from(msg.subarray(12 + (msg[0] & 0x0f) * 4, len)));
      }
      leg.arrivals.push(t);
      leg.seqs.push(msg.readUInt32BE(4)); // RTP timestamp: the sender's clock
      if (relayOf) leg.loopIdx.push(relayOf.get(payloadKey(msg, 12 + (msg[0] & 0x0f) * 4, len)) ?? -1);
      leg.count++;
    });
    sockets.push(s);
  }
  send({ ports: sockets.map((s) => s.port), io: PEER_IO });
}

/** One measured run: every leg sends for `durationMs` (measured after `warmupMs`), then the report goes back. */
async function start(m: PeerCommand): Promise<void> {
  const targets = m.targets!;
  // per leg: the packets it replays (encoded once here, before the clock starts), else PCMU silence
  const specs = m.legs;
  const loops = specs ? legLoops(specs) : null;
  relayOf = null;
  sentAt = targets.map(() => []);
  if (m.relay) relayOf = relayIndex(loops, targets.length);
  setTimeout(() => (measuring = true), m.warmupMs!);
  await sendAll(targets, loops, specs, m.durationMs!);
  measuring = false;
  send(report(specs));
}

/** Each leg's loop of its codec's tone packets; the leg then accepts its codec's payload type and keeps its last payloads. */
function legLoops(specs: LegSpec[]): Buffer[][] {
  const loops: Buffer[][] = [];
  const made = new Map<string, Buffer[]>();
  for (const [i, sp] of specs.entries()) {
    const key = `${sp.codec}/${sp.toneHz}`;
    if (!made.has(key)) made.set(key, tonePackets(sp.codec, sp.toneHz));
    loops.push(made.get(key)!);
    Object.assign(rx[i], { pt: sp.pt, tpf: TICKS_PER_FRAME[sp.codec], last: [] });
  }
  return loops;
}

/** `relay`: which packet of its loop each payload is (the loops' packets must differ by their payloads). */
function relayIndex(loops: Buffer[][] | null, legs: number): Map<number, number> {
  if (!loops || legs % 2) throw new Error('relay: legs in pairs with their loops');
  const index = new Map<number, number>();
  for (const loop of loops) for (const [j, p] of loop.entries()) index.set(payloadKey(p, 0, p.length), j);
  if (index.size !== loops[0]!.length * new Set(loops).size) throw new Error('relay: the loop packets are not told apart by their payloads');
  return index;
}

/**
 * Every leg sends a packet each 20 ms until `durationMs`. 500 phones do not send in step: leg i sends at
 * its own offset (i mod 4) x 5 ms within each 20 ms, so the engine sees the packet arrivals a real far
 * end would give it, and the sends here do not hold up the timestamping of the engine's packets for a
 * whole burst.
 */
async function sendAll(targets: number[], loops: Buffer[][] | null, specs: LegSpec[] | undefined, durationMs: number): Promise<void> {
  const payload = Buffer.alloc(160, 0xff);
  const PHASES = 4;
  const SUB = 20 / PHASES;
  const sent = new Uint32Array(targets.length);
  const start = performance.now();
  let k = 0;
  const end = start + durationMs;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      if (now >= end) return resolve();
      while (performance.now() >= start + (k + 1) * SUB) {
        const phase = k % PHASES;
        k++;
        for (let i = phase; i < targets.length; i += PHASES) {
          const n = sent[i]++;
          const body = loops ? loops[i][n % loops[i].length] : payload;
          const b = Buffer.allocUnsafe(12 + body.length);
          b[0] = 0x80;
          b[1] = specs ? specs[i].pt : 0;
          b.writeUInt16BE(n & 0xffff, 2);
          b.writeUInt32BE((n * (specs ? TICKS_PER_FRAME[specs[i].codec] : 160)) >>> 0, 4);
          b.writeUInt32BE(1000 + i, 8);
          body.copy(b, 12);
          // read before the send: a send that finds the ring full flushes it and hands this process the
          // packets that came meanwhile, and a send time read after that could come after the forwarded
          // packet's own arrival (which relay-timing then took for one a whole loop later)
          if (relayOf) sentAt[i]!.push(performance.now());
          sockets[i].send(b, targets[i]);
        }
      }
      setTimeout(tick, Math.max(0, start + (k + 1) * SUB - performance.now()));
    };
    tick();
  });
}

/** The run's report: send-time error percentiles, loss, legs heard, the tone check; the legs' records are emptied. */
function report(specs: LegSpec[] | undefined): Record<string, unknown> {
  const legsHeard = rx.filter((l) => l.count > 0).length;
  const { errors, expected, received } = sendErrors();
  const tones = specs ? toneCheck(specs) : undefined;
  for (const leg of rx) {
    leg.arrivals = [];
    leg.seqs = [];
    leg.loopIdx = [];
    leg.count = 0;
    if (leg.last) leg.last = [];
  }
  errors.sort((a, b) => a - b);
  const pct = (p: number) => (errors.length ? errors[Math.min(errors.length - 1, Math.floor(errors.length * p))] : 0);
  return { p50: pct(0.5), p99: pct(0.99), max: errors[errors.length - 1] ?? 0, expected, received, lossPct: expected ? ((expected - received) / expected) * 100 : 100, legsHeard, tones };
}

/** Send-time error: each packet's arrival vs the ideal 20 ms grid of its leg (by RTP timestamp), or its relay delay; and the packets expected and received. */
function sendErrors(): { errors: number[]; expected: number; received: number } {
  const errors: number[] = [];
  let expected = 0;
  let received = 0;
  for (const [i, leg] of rx.entries()) {
    if (leg.seqs.length < 2) continue;
    const s0 = leg.seqs[0];
    let base = Infinity;
    const idx = leg.seqs.map((s) => Math.round(((s - s0) >>> 0) / leg.tpf));
    if (relayOf) errors.push(...relayErrors(leg, sentAt[i ^ 1]!));
    else {
      for (let k = 0; k < idx.length; k++) base = Math.min(base, leg.arrivals[k] - idx[k] * 20);
      for (let k = 0; k < idx.length; k++) errors.push(leg.arrivals[k] - idx[k] * 20 - base);
    }
    const span = Math.max(...idx) + 1;
    expected += span;
    received += new Set(idx).size;
  }
  return { errors, expected, received };
}

/** The tone check: every leg's last packets decoded (the far end's own decoder), the other side's tone expected. */
function toneCheck(specs: LegSpec[]): { legs: number; silent: number; wrongTone: number; minRms: number; minShare: number } {
  const tones = { legs: specs.length, silent: 0, wrongTone: 0, minRms: Infinity, minShare: Infinity };
  for (const [i, sp] of specs.entries()) {
    const h = hearTone(sp.codec, rx[i].last ?? [], sp.expectHz);
    tones.minRms = Math.min(tones.minRms, h.rms);
    tones.minShare = Math.min(tones.minShare, h.toneShare);
    if (!isTone(h)) tones[h.rms < 100 ? 'silent' : 'wrongTone']++;
  }
  return tones;
}

function closeAll(): void {
  for (const s of sockets) s.close();
  sockets = [];
  for (const s of echoes) s.close();
  echoes = [];
  if (poller) clearInterval(poller);
  poller = null;
  send({ closed: true });
}

/** An echo socket for the raw-UDP baseline. */
async function echo(): Promise<void> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  s.on('message', (msg, r) => s.send(msg, r.port, r.address));
  echoes.push(s);
  send({ port: s.address().port });
}

function stall(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

// A failed command ends the peer loudly: the parent sees it exit and stops the run.
process.on('message', (m: PeerCommand) => {
  onMessage(m).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
});

// the benchmark was interrupted: do not outlive it
process.on('disconnect', () => process.exit(0));
