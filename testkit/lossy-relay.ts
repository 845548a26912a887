/**
 * A UDP relay that impairs RTP on its way, for call-quality measurements: two sides, `near` (a phone,
 * sipp, a test endpoint) and `far` (the platform), each an RTP socket and the RTCP socket above it.
 * Each side's peer is learnt from the first packet it sends (symmetric RTP, as the engine latches), so
 * the relay needs no SDP: put `near.rtp` in the phone's view of the platform and `far.rtp` in the
 * platform's view of the phone. RTP going `toFar` and/or `toNear` loses exactly `lossPct` % of its
 * packets, spread evenly (error diffusion from a seeded start: the same count on every run), and is
 * delayed by a seeded uniform draw from [0, 3·jitterMs] ms, whose RFC 3550 interarrival jitter is about
 * `jitterMs` (the mean |difference| of two such delays is a third of the span). RTCP passes unimpaired.
 *
 * The relay runs on the test's event loop, beside the platform it measures: a stalled loop (GC, a busy
 * shard) holds packets as a network would, and the platform rightly hears that as jitter. So each
 * direction keeps how late its RTP arrived here (`lateness`), before any impairment: a test that needs a
 * clean path reads it and says when its premise did not hold.
 */
import dgram from 'node:dgram';
import { newRtpHeader, readRtpHeader, tsDiff } from '../media-engine/rtp-packet/packet';
import { sippMediaPort } from './ports';
import { seededRandom } from './seeded';

export interface Impairment {
  lossPct: number;
  jitterMs: number;
}

export interface LossyRelayOptions {
  toFar?: Impairment;
  toNear?: Impairment;
  seed?: number;
  /** the RTP clock of the streams (ArrivalLateness), 8000 unless set */
  clockHz?: number;
}

interface Side {
  rtp: dgram.Socket;
  rtcp: dgram.Socket;
  rtpPort: number;
  peerRtp: { address: string; port: number } | null;
  peerRtcp: { address: string; port: number } | null;
}

async function bind(port: number): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.bind(port, '127.0.0.1', () => {
      s.off('error', reject);
      resolve();
    });
  });
  return s;
}

async function openSide(): Promise<Side> {
  for (let attempt = 0; ; attempt++) {
    const base = await sippMediaPort();
    try {
      const rtp = await bind(base);
      const rtcp = await bind(base + 1).catch((e: Error) => {
        rtp.close();
        throw e;
      });
      return { rtp, rtcp, rtpPort: base, peerRtp: null, peerRtcp: null };
    } catch (e) {
      if (attempt >= 5) throw e;
    }
  }
}

/** Counts per direction: RTP packets that arrived, were dropped, were forwarded. */
export interface RelayCounts {
  rtpIn: number;
  dropped: number;
  forwarded: number;
  rtcp: number;
}

/**
 * How late a direction's RTP reached the relay: each packet's arrival against its RTP timestamp
 * (at `clockHz`), relative to the earliest packet of the stream; the worst is the most any packet came
 * behind the sender's clock and the relay's own loop (a stalled loop reads a burst at once). A stream is
 * one SSRC (a new one starts over, its worst kept) and its first packet's payload type: others (a
 * telephone-event holds one timestamp over its packets, comfort noise its own) are not its clock.
 */
export class ArrivalLateness {
  private n = 0;
  private ssrc = 0;
  private pt = 0;
  private lo = Infinity;
  private hi = -Infinity;
  private lastTs = 0;
  /** the timestamp since the stream's first packet, unwrapped past 2^32 */
  private ts = 0;
  /** the worst of the streams before this one */
  private before = 0;
  constructor(private readonly clockHz: number) {}

  /** A packet of `ssrc`, payload type `pt` and RTP timestamp `rtpTs` arrived at `atMs` (performance.now()). */
  add(ssrc: number, pt: number, rtpTs: number, atMs: number): void {
    if (this.n > 0 && ssrc !== this.ssrc) {
      this.before = this.worstMs;
      this.n = 0;
      this.lo = Infinity;
      this.hi = -Infinity;
    }
    if (this.n === 0) {
      this.ssrc = ssrc;
      this.pt = pt;
      this.ts = 0;
    } else if (pt !== this.pt) return;
    else this.ts += tsDiff(rtpTs, this.lastTs);
    this.n++;
    this.lastTs = rtpTs;
    const offset = atMs - (this.ts * 1000) / this.clockHz;
    this.lo = Math.min(this.lo, offset);
    this.hi = Math.max(this.hi, offset);
  }

  /** The worst lateness so far (ms): the largest offset over the smallest, of any stream; 0 before two packets of one. */
  get worstMs(): number {
    return Math.max(this.before, this.n < 2 ? 0 : this.hi - this.lo);
  }
}

export class LossyRelay {
  readonly counts: { toFar: RelayCounts; toNear: RelayCounts } = {
    toFar: { rtpIn: 0, dropped: 0, forwarded: 0, rtcp: 0 },
    toNear: { rtpIn: 0, dropped: 0, forwarded: 0, rtcp: 0 },
  };
  /** how late each direction's RTP reached the relay (ArrivalLateness), at the options' clock (8000 Hz unless set) */
  readonly lateness: { toFar: ArrivalLateness; toNear: ArrivalLateness };
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;
  /** set by hold(): nothing more is forwarded (packets already delayed still arrive) */
  private held = false;

  private constructor(
    readonly near: Side,
    readonly far: Side,
    private readonly opts: LossyRelayOptions,
  ) {
    const clockHz = opts.clockHz ?? 8000;
    this.lateness = { toFar: new ArrivalLateness(clockHz), toNear: new ArrivalLateness(clockHz) };
  }

  static async open(opts: LossyRelayOptions): Promise<LossyRelay> {
    const near = await openSide();
    const far = await openSide().catch((e: Error) => {
      near.rtp.close();
      near.rtcp.close();
      throw e;
    });
    const relay = new LossyRelay(near, far, opts);
    relay.wire(near, far, opts.toFar, relay.counts.toFar, relay.lateness.toFar, (opts.seed ?? 1) * 2);
    relay.wire(far, near, opts.toNear, relay.counts.toNear, relay.lateness.toNear, (opts.seed ?? 1) * 2 + 1);
    return relay;
  }

  /** Packets arriving at `from` (from its peer) leave through `to` towards `to`'s peer. */
  private wire(from: Side, to: Side, imp: Impairment | undefined, counts: RelayCounts, lateness: ArrivalLateness, seed: number): void {
    const rnd = seededRandom(seed);
    let debt = rnd(); // error diffusion: a drop each time the debt passes 1
    const h = newRtpHeader();
    from.rtp.on('message', (msg, rinfo) => {
      from.peerRtp = { address: rinfo.address, port: rinfo.port };
      from.peerRtcp ??= { address: rinfo.address, port: rinfo.port + 1 };
      counts.rtpIn++;
      const peer = to.peerRtp;
      if (!peer || this.closed || this.held) return;
      // (of the packets the far side can get: none before it is known; those the loss drops below included)
      if (readRtpHeader(msg, h)) lateness.add(h.ssrc, h.payloadType, h.timestamp, performance.now());
      if (imp && imp.lossPct > 0) {
        debt += imp.lossPct / 100;
        if (debt >= 1) {
          debt -= 1;
          counts.dropped++;
          return;
        }
      }
      const delay = imp && imp.jitterMs > 0 ? rnd() * 3 * imp.jitterMs : 0;
      const send = () => {
        if (this.closed) return;
        counts.forwarded++;
        to.rtp.send(msg, peer.port, peer.address);
      };
      if (delay <= 0) return send();
      const t = setTimeout(() => {
        this.timers.delete(t);
        send();
      }, delay);
      this.timers.add(t);
    });
    from.rtcp.on('message', (msg, rinfo) => {
      from.peerRtcp = { address: rinfo.address, port: rinfo.port };
      const peer = to.peerRtcp;
      if (!peer || this.closed || this.held) return;
      counts.rtcp++;
      to.rtcp.send(msg, peer.port, peer.address);
    });
  }

  /** Tells the relay where the far side's RTP is before it has sent anything (its RTCP: port + 1). */
  setFarPeer(address: string, rtpPort: number, rtcpPort = rtpPort + 1): void {
    this.far.peerRtp = { address, port: rtpPort };
    this.far.peerRtcp = { address, port: rtcpPort };
  }

  setNearPeer(address: string, rtpPort: number, rtcpPort = rtpPort + 1): void {
    this.near.peerRtp = { address, port: rtpPort };
    this.near.peerRtcp = { address, port: rtcpPort };
  }

  /** Stops forwarding (both ways, RTP and RTCP) and resolves once every delayed packet went out: counts are final. */
  async hold(): Promise<void> {
    this.held = true;
    while (this.timers.size) await new Promise((r) => setTimeout(r, 20));
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const s of [this.near.rtp, this.near.rtcp, this.far.rtp, this.far.rtcp]) s.close();
  }
}
