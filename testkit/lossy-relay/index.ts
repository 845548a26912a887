/**
 * A UDP relay that impairs RTP on its way, for call-quality measurements: two sides, `near` (a phone,
 * sipp, a test endpoint) and `far` (the platform), each an RTP socket and the RTCP socket above it.
 * Each side's peer is learnt from the first packet it sends (symmetric RTP, as the engine latches), so
 * the relay needs no SDP: put `near.rtpPort` in the phone's view of the platform and `far.rtpPort` in the
 * platform's view of the phone. RTP going `toFar` and/or `toNear` loses exactly `lossPct` % of its
 * packets, spread evenly (error diffusion from a seeded start: the same count on every run), and is
 * delayed by a seeded uniform draw from [0, 3·jitterMs] ms, whose RFC 3550 interarrival jitter is about
 * `jitterMs` (the mean |difference| of two such delays is a third of the span). RTCP passes unimpaired.
 *
 * The relay runs on a thread of its own (worker.ts): a stall of the test's event loop, where the platform
 * under test runs, is not the path's. The machine's load still is: a starved thread reads a burst late
 * as a network would deliver it, and the platform rightly hears that as jitter. So each direction keeps
 * how late its RTP arrived at the relay (`lateness`), before any impairment: a test that needs a clean
 * path reads it and says when its premise did not hold. The counts and the lateness are read at any time
 * (a shared array the relay's thread writes); what changes the relay (a peer, hold, close) is awaited.
 */
import { workerBeside } from '../../core/files/worker-file';
import { sippMediaPort } from '../ports';
import { ThreadCalls } from '../thread-calls';
import { cellIndex, SHARED_BYTES, type Cell, type Direction, type Impairment, type RelayRequest, type SideName } from './protocol';

export type { Impairment } from './protocol';

export interface LossyRelayOptions {
  toFar?: Impairment;
  toNear?: Impairment;
  seed?: number;
  /** the RTP clock of the streams (ArrivalLateness), 8000 unless set */
  clockHz?: number;
}

/** Counts per direction: RTP packets that arrived, were dropped, were forwarded; RTCP packets forwarded. */
export interface RelayCounts {
  readonly rtpIn: number;
  readonly dropped: number;
  readonly forwarded: number;
  readonly rtcp: number;
}

/** How late a direction's RTP reached the relay: the worst, in ms (ArrivalLateness, arrival-lateness.ts). */
export interface Lateness {
  readonly worstMs: number;
}

/** A bound side: its RTP port (RTCP on the next). */
export interface RelaySide {
  readonly rtpPort: number;
}

/** Attempts at a side's pair of ports (another process may take a drawn port before the relay binds it). */
const BIND_ATTEMPTS = 6;

/** The relay's thread: its requests (thread-calls.ts) and the shared array it writes. */
class RelayThread {
  readonly calls: ThreadCalls<RelayRequest>;
  private readonly cells: Int32Array;

  constructor() {
    const shared = new SharedArrayBuffer(SHARED_BYTES);
    this.cells = new Int32Array(shared);
    this.calls = new ThreadCalls(workerBeside(__filename, 'worker', { shared }), 'lossy relay');
  }

  read(dir: Direction, cell: Cell): number {
    return Atomics.load(this.cells, cellIndex(dir, cell));
  }
}

function countsOf(thread: RelayThread, dir: Direction): RelayCounts {
  return {
    get rtpIn() {
      return thread.read(dir, 'rtpIn');
    },
    get dropped() {
      return thread.read(dir, 'dropped');
    },
    get forwarded() {
      return thread.read(dir, 'forwarded');
    },
    get rtcp() {
      return thread.read(dir, 'rtcp');
    },
  };
}

async function bindSide(thread: RelayThread, side: SideName): Promise<RelaySide> {
  for (let attempt = 1; ; attempt++) {
    const base = await sippMediaPort();
    try {
      await thread.calls.call({ t: 'bind', side, base });
      return { rtpPort: base };
    } catch (e) {
      if (attempt >= BIND_ATTEMPTS) throw e;
    }
  }
}

export class LossyRelay {
  readonly counts: { readonly toFar: RelayCounts; readonly toNear: RelayCounts };
  /** how late each direction's RTP reached the relay, at the options' clock (8000 Hz unless set) */
  readonly lateness: { readonly toFar: Lateness; readonly toNear: Lateness };

  private constructor(
    private readonly thread: RelayThread,
    readonly near: RelaySide,
    readonly far: RelaySide,
  ) {
    this.counts = { toFar: countsOf(thread, 'toFar'), toNear: countsOf(thread, 'toNear') };
    const worst = (dir: Direction): Lateness => ({
      get worstMs() {
        return thread.read(dir, 'worstUs') / 1000;
      },
    });
    this.lateness = { toFar: worst('toFar'), toNear: worst('toNear') };
  }

  static async open(opts: LossyRelayOptions): Promise<LossyRelay> {
    const thread = new RelayThread();
    try {
      const near = await bindSide(thread, 'near');
      const far = await bindSide(thread, 'far');
      const seed = opts.seed ?? 1;
      await thread.calls.call({ t: 'start', toFar: opts.toFar ?? null, toNear: opts.toNear ?? null, seed, clockHz: opts.clockHz ?? 8000 });
      return new LossyRelay(thread, near, far);
    } catch (e) {
      await thread.calls.end().catch(() => undefined);
      throw e;
    }
  }

  /** Tells the relay where the far side's RTP is before it has sent anything (its RTCP: port + 1). */
  setFarPeer(address: string, rtpPort: number, rtcpPort = rtpPort + 1): Promise<void> {
    return this.thread.calls.call({ t: 'peer', side: 'far', address, rtpPort, rtcpPort });
  }

  setNearPeer(address: string, rtpPort: number, rtcpPort = rtpPort + 1): Promise<void> {
    return this.thread.calls.call({ t: 'peer', side: 'near', address, rtpPort, rtcpPort });
  }

  /** Stops forwarding (both ways, RTP and RTCP) and resolves once every delayed packet went out: counts are final. */
  hold(): Promise<void> {
    return this.thread.calls.call({ t: 'hold' });
  }

  /** Closes the relay: its sockets and its thread. Rejects with the error of a socket that failed meanwhile. */
  close(): Promise<void> {
    return this.thread.calls.end();
  }
}
