// The lossy relay's own thread (started by index.ts): its sockets, its loss and delays, and the lateness
// of what arrives are here, off the test's event loop, so a stall of the test's loop (the platform under
// test runs on it) is not read as lateness of the path nor held as packets in the relay.
import dgram from 'node:dgram';
import { parentPort, workerData } from 'node:worker_threads';
import { newRtpHeader, readRtpHeader } from '../../media-engine/rtp-packet/packet';
import { seededRandom } from '../seeded';
import { ArrivalLateness } from './arrival-lateness';
import type { ThreadReply, ThreadRequest } from '../thread-calls';
import { cellIndex, type Cell, type Direction, type Impairment, type RelayRequest, type SideName } from './protocol';

interface Peer {
  address: string;
  port: number;
}

interface Side {
  rtp: dgram.Socket;
  rtcp: dgram.Socket;
  peerRtp: Peer | null;
  peerRtcp: Peer | null;
}

const port = parentPort!;
const shared = new Int32Array((workerData as { shared: SharedArrayBuffer }).shared);
const sides = new Map<SideName, Side>();
const timers = new Set<NodeJS.Timeout>();
let held = false;

const post = (m: ThreadReply) => port.postMessage(m);
const add = (dir: Direction, cell: Cell, n = 1) => Atomics.add(shared, cellIndex(dir, cell), n);

function onSocketError(e: Error): void {
  post({ t: 'fault', error: `a socket failed: ${e.message}` });
}

function bindOne(at: number): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  return new Promise((resolve, reject) => {
    s.once('error', reject);
    s.bind(at, '127.0.0.1', () => {
      s.off('error', reject);
      s.on('error', onSocketError);
      resolve(s);
    });
  });
}

async function bind(side: SideName, base: number): Promise<void> {
  if (sides.has(side)) throw new Error(`side ${side} is bound already`);
  const rtp = await bindOne(base);
  const rtcp = await bindOne(base + 1).catch((e: Error) => {
    rtp.close();
    throw e;
  });
  sides.set(side, { rtp, rtcp, peerRtp: null, peerRtcp: null });
}

function sideOf(name: SideName): Side {
  const s = sides.get(name);
  if (!s) throw new Error(`side ${name} is not bound`);
  return s;
}

/** Packets arriving at `from` (from its peer) leave through `to` towards `to`'s peer. */
function wire(from: Side, to: Side, dir: Direction, imp: Impairment | null, lateness: ArrivalLateness, seed: number): void {
  const rnd = seededRandom(seed);
  let debt = rnd(); // error diffusion: a drop each time the debt passes 1
  const h = newRtpHeader();
  from.rtp.on('message', (msg, rinfo) => {
    from.peerRtp = { address: rinfo.address, port: rinfo.port };
    from.peerRtcp ??= { address: rinfo.address, port: rinfo.port + 1 };
    add(dir, 'rtpIn');
    const peer = to.peerRtp;
    if (!peer || held) return;
    // (of the packets the far side can get: none before it is known; those the loss drops below included)
    if (readRtpHeader(msg, h)) {
      lateness.add(h.ssrc, h.payloadType, h.timestamp, performance.now());
      Atomics.store(shared, cellIndex(dir, 'worstUs'), Math.round(lateness.worstMs * 1000));
    }
    if (imp && imp.lossPct > 0) {
      debt += imp.lossPct / 100;
      if (debt >= 1) {
        debt -= 1;
        add(dir, 'dropped');
        return;
      }
    }
    const delay = imp && imp.jitterMs > 0 ? rnd() * 3 * imp.jitterMs : 0;
    const send = () => {
      add(dir, 'forwarded');
      to.rtp.send(msg, peer.port, peer.address);
    };
    if (delay <= 0) return send();
    const t = setTimeout(() => {
      timers.delete(t);
      send();
    }, delay);
    timers.add(t);
  });
  from.rtcp.on('message', (msg, rinfo) => {
    from.peerRtcp = { address: rinfo.address, port: rinfo.port };
    const peer = to.peerRtcp;
    if (!peer || held) return;
    add(dir, 'rtcp');
    to.rtcp.send(msg, peer.port, peer.address);
  });
}

function start(req: Extract<RelayRequest, { t: 'start' }>): void {
  const near = sideOf('near');
  const far = sideOf('far');
  wire(near, far, 'toFar', req.toFar, new ArrivalLateness(req.clockHz), req.seed * 2);
  wire(far, near, 'toNear', req.toNear, new ArrivalLateness(req.clockHz), req.seed * 2 + 1);
}

async function drained(): Promise<void> {
  while (timers.size) await new Promise((r) => setTimeout(r, 20));
}

async function handle(req: RelayRequest): Promise<void> {
  switch (req.t) {
    case 'bind':
      return bind(req.side, req.base);
    case 'start':
      return start(req);
    case 'peer': {
      const s = sideOf(req.side);
      s.peerRtp = { address: req.address, port: req.rtpPort };
      s.peerRtcp = { address: req.address, port: req.rtcpPort };
      return;
    }
    case 'hold':
      held = true;
      return drained();
  }
}

port.on('message', (m: ThreadRequest<RelayRequest>) => {
  handle(m.req).then(
    () => post({ t: 'reply', id: m.id, error: null }),
    (e: Error) => post({ t: 'reply', id: m.id, error: e.message }),
  );
});
