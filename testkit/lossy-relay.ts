/**
 * A UDP relay that impairs RTP on its way, for call-quality measurements: two sides, `near` (a phone,
 * sipp, a test endpoint) and `far` (the platform), each an RTP socket and the RTCP socket above it.
 * Each side's peer is learnt from the first packet it sends (symmetric RTP, as the engine latches), so
 * the relay needs no SDP: put `near.rtp` in the phone's view of the platform and `far.rtp` in the
 * platform's view of the phone. RTP going `toFar` and/or `toNear` loses exactly `lossPct` % of its
 * packets, spread evenly (error diffusion from a seeded start: the same count on every run), and is
 * delayed by a seeded uniform draw from [0, 3·jitterMs] ms, whose RFC 3550 interarrival jitter is about
 * `jitterMs` (the mean |difference| of two such delays is a third of the span). RTCP passes unimpaired.
 */
import dgram from 'node:dgram';
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

export class LossyRelay {
  readonly counts: { toFar: RelayCounts; toNear: RelayCounts } = {
    toFar: { rtpIn: 0, dropped: 0, forwarded: 0, rtcp: 0 },
    toNear: { rtpIn: 0, dropped: 0, forwarded: 0, rtcp: 0 },
  };
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;
  /** set by hold(): nothing more is forwarded (packets already delayed still arrive) */
  private held = false;

  private constructor(
    readonly near: Side,
    readonly far: Side,
    private readonly opts: LossyRelayOptions,
  ) {}

  static async open(opts: LossyRelayOptions): Promise<LossyRelay> {
    const near = await openSide();
    const far = await openSide().catch((e: Error) => {
      near.rtp.close();
      near.rtcp.close();
      throw e;
    });
    const relay = new LossyRelay(near, far, opts);
    relay.wire(near, far, opts.toFar, relay.counts.toFar, (opts.seed ?? 1) * 2);
    relay.wire(far, near, opts.toNear, relay.counts.toNear, (opts.seed ?? 1) * 2 + 1);
    return relay;
  }

  /** Packets arriving at `from` (from its peer) leave through `to` towards `to`'s peer. */
  private wire(from: Side, to: Side, imp: Impairment | undefined, counts: RelayCounts, seed: number): void {
    const rnd = seededRandom(seed);
    let debt = rnd(); // error diffusion: a drop each time the debt passes 1
    from.rtp.on('message', (msg, rinfo) => {
      from.peerRtp = { address: rinfo.address, port: rinfo.port };
      from.peerRtcp ??= { address: rinfo.address, port: rinfo.port + 1 };
      counts.rtpIn++;
      const peer = to.peerRtp;
      if (!peer || this.closed || this.held) return;
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
