/**
 * A worker that stalls past its clock's catch-up (a loaded machine: CI runs three shards on two cores)
 * skips the ticks it missed: its legs' RTP clocks move on by them (the far end hears a gap, not a
 * shift). Their receive side must move on too: a jitter buffer whose playout point stayed where the
 * stall found it plays the stall's length late from then on (a far end with its own clock: its packets
 * of the stall wait in the buffer), or conceals the stall's length (a far end in the same stalled
 * worker: its timestamps jumped). The engine runs in this thread here, so blocking the thread is a
 * real stall of its clock; the far end of the latency test runs in a thread of its own. CI on 8e4920c7:
 * test/esl/conference.test.ts's room heard 400 ms late and with gaps after stalls of its worker.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Engine } from '../../media-engine/worker/engine';
import { configureRtpIo, rtpIoKind } from '../../media-engine/worker/rtp-transport';
import { portBlock } from '../../testkit/ports';
import { pcmuOffer, readWav, rms, tmpDir } from '../../testkit/media-engine/support';
import { stallThread } from '../../testkit/thread-stall';

/** Resolves once `ok()` holds, looked at every 10 ms; rejects after `timeoutMs`. */
async function until(ok: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * A far end in its own thread: every 20 ms (on its own clock) a PCMU packet whose every byte is a marker
 * (64 values in turn), and for each packet that comes back with a marker, how long after its sending.
 */
const FAR_END = `
const { parentPort, workerData } = require('node:worker_threads');
const dgram = require('node:dgram');
const sock = dgram.createSocket('udp4');
const sent = new Map();
const delays = [];
let seq = 0;
let timer = null;
const t0 = performance.now();
sock.on('error', (e) => parentPort.postMessage({ error: e.message }));
sock.on('message', (m) => {
  if (m.length < 12 + 160 || (m[1] & 0x7f) !== 0) return;
  const at = sent.get(m[12 + 80]);
  if (at === undefined) return;
  sent.delete(m[12 + 80]);
  delays.push(performance.now() - at);
});
function send() {
  const marker = 0x20 + (seq % 64);
  const p = Buffer.alloc(12 + 160, marker);
  p[0] = 0x80;
  p[1] = 0;
  p.writeUInt16BE(seq & 0xffff, 2);
  p.writeUInt32BE((seq * 160) >>> 0, 4);
  p.writeUInt32BE(0x5157a11, 8);
  sent.set(marker, performance.now());
  sock.send(p, workerData.to, '127.0.0.1');
  seq++;
  timer = setTimeout(send, Math.max(0, t0 + seq * 20 - performance.now()));
}
sock.bind(workerData.port, '127.0.0.1', () => { parentPort.postMessage({ bound: true }); send(); });
parentPort.on('message', (m) => {
  if (m === 'report') parentPort.postMessage({ delays: delays.splice(0) });
  if (m === 'stop') { clearTimeout(timer); sock.close(() => parentPort.close()); }
});
`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Echo delays at the far end (FAR_END, its own thread and clock, sending to `to` from `farPort`) over
 * 25 packets before a 600 ms stall of this thread and 25 a second after it: the stall adds at most
 * what the buffer at its widest (8 frames) does, not its 600 ms.
 */
async function expectOnTimeAcrossStall(engine: Engine, farPort: number, to: number): Promise<void> {
  const far = new Worker(FAR_END, { eval: true, workerData: { port: farPort, to } });
  const delays: number[] = [];
  let failed: string | null = null;
  far.on('message', (m: { delays?: number[]; error?: string }) => {
    if (m.delays) delays.push(...m.delays);
    if (m.error) failed = m.error;
  });
  const farGone = new Promise((r) => far.once('exit', r));
  try {
    /** The echo delays of the next `n` packets that come back. */
    const next = async (n: number): Promise<number[]> => {
      const from = delays.length;
      await until(() => (far.postMessage('report'), delays.length >= from + n), `${n} echoes`);
      return delays.slice(from, from + n);
    };
    await next(25); // the buffer settles
    const before = median(await next(25));
    const resyncs = engine.clock.stats.resyncs;
    stallThread(600);
    await next(50); // the packets of the stall, and a second after it
    const after = median(await next(25));
    expect(engine.clock.stats.resyncs, 'the stall was skipped, not caught up').to.be.above(resyncs);
    expect(failed).to.equal(null);
    expect(after - before, `echo ${Math.round(before)} ms before the stall, ${Math.round(after)} ms after`).to.be.below(160);
  } finally {
    far.postMessage('stop');
    await farGone;
  }
}

describe('media-engine: a stalled worker moves its playout on with its RTP clock', function () {
  this.timeout(30_000);
  let engine: Engine;
  let dir: string;
  let ports: { min: number; max: number };
  beforeEach(() => {
    // sockets read at the tick, as a worker's (its ring, or the native path it falls back to): with node's
    // dgram a packet waits for the event loop, so the ticks the clock catches up in one go hear none
    configureRtpIo('native');
    expect(rtpIoKind()).to.equal('native');
    engine = new Engine(
      () => undefined,
      () => undefined,
    );
    dir = tmpDir();
    ports = portBlock('engineRtp', 8, 2);
  });
  afterEach(async () => {
    await engine.shutdown();
    configureRtpIo('dgram');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a far end in the same stalled worker is heard after the stall with a gap of its buffer's depth, not of the stall", async () => {
    const tone = path.join(dir, 'tone.wav');
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', tone, 'synth', '8', 'sine', '1000', 'vol', '0.5']);
    const a = await engine.createLeg('a', { address: '127.0.0.1', port: ports.min, inbandDtmf: false });
    const b = await engine.createLeg('b', { address: '127.0.0.1', port: ports.min + 2, remoteSdp: a.localSdp, inbandDtmf: false });
    engine.modifyLeg('a', b.localSdp);
    const played = engine.play('a', [tone]).catch((e: Error) => e);
    const received = () => engine.stats('b').packetsReceived;
    await until(() => received() >= 10, 'b to hear a');
    const file = path.join(dir, 'b.wav');
    const recorded = engine.record('b', file, { duration: 2 });
    const from = received();
    await until(() => received() >= from + 25, 'half a second recorded');
    const resyncs = engine.clock.stats.resyncs;
    stallThread(600);
    await recorded;
    expect(engine.clock.stats.resyncs, 'the stall was skipped, not caught up').to.be.above(resyncs);
    engine.stopPlayback('a');
    await played;
    const x = readWav(file).samples;
    const frames = Array.from({ length: Math.floor(x.length / 160) }, (_, i) => rms(x, i * 160, i * 160 + 160));
    // the tone's 20 ms frames (RMS ~11600); a concealed gap fades (0.75, 0.5, 0.25) into silence
    // the tone's 20 ms frames (RMS ~11600); a concealed gap fades (0.75, 0.5, 0.25) into silence. The
    // frames b plays behind a (its jitter buffer's depth) were due from a while both stalled: a never
    // sent them, so that many are concealed (one more where their slots of the period differ), not the
    // stall's 30 (b's playout left behind: every frame a sent after the stall came the stall early)
    const quiet = frames.flatMap((r, i) => (r < 0.9 * 11600 ? [i] : []));
    expect(frames.length).to.equal(100);
    const depth = engine.stats('b').jitterTargetFrames;
    expect(quiet.length, `the frames of b under the tone: ${quiet.join(' ')}`).to.be.at.most(depth + 1);
  });

  it('a far end with its own clock is heard as late after the stall as before it, not the stall later', async () => {
    const farPort = ports.min + 4;
    const leg = await engine.createLeg('b', { address: '127.0.0.1', port: ports.min, remoteSdp: pcmuOffer(farPort), inbandDtmf: false });
    expect(leg.media).to.not.equal(null);
    engine.setEcho('b', true);
    await expectOnTimeAcrossStall(engine, farPort, ports.min);
  });
});

describe('media-engine: plain G.711 legs in C move their playout on with their RTP clock after a stall', function () {
  this.timeout(30_000);
  let engine: Engine;
  let ports: { min: number; max: number };
  beforeEach(() => {
    // the C legs (native/rtp_legs.c) serve bridged plain G.711 pairs on the thread's io_uring
    configureRtpIo('uring');
    expect(rtpIoKind()).to.equal('uring');
    engine = new Engine(
      () => undefined,
      () => undefined,
    );
    ports = portBlock('engineRtp', 8, 2);
  });
  afterEach(async () => {
    await engine.shutdown();
    configureRtpIo('dgram');
  });

  it('a far end with its own clock is heard through a C bridge as late after the stall as before it', async () => {
    const farPort = ports.min + 4;
    // the far end talks to a; b, bridged to a, sends what a hears back to the far end (a sends b's silence there too)
    await engine.createLeg('a', { address: '127.0.0.1', port: ports.min, remoteSdp: pcmuOffer(farPort), inbandDtmf: false });
    await engine.createLeg('b', { address: '127.0.0.1', port: ports.min + 2, remoteSdp: pcmuOffer(farPort), inbandDtmf: false });
    engine.bridge('a', 'b');
    await until(() => engine.workerStats().cLegs === 2, 'the bridged pair to move to C');
    await expectOnTimeAcrossStall(engine, farPort, ports.min);
    expect(engine.workerStats().cLegs, 'the legs stayed in C').to.equal(2);
    // what was due in the stall is counted stalled, not late (the C legs' accounting, as the JS jitter buffer's)
    expect(engine.stats('a').stalled, 'frames the stall skipped, counted stalled').to.be.at.least(15);
  });
});
