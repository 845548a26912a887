/**
 * MediaServer: starts the media workers (threads, each with its own 20 ms clock) and hands out
 * Endpoints and Conferences, shaped like drachtio-fsmrf's MediaServer.
 */
import type { EgressSettings } from '../core/net';
import { randomUUID } from 'node:crypto';
import dns from 'node:dns';
import { EventEmitter } from 'node:events';
import os from 'node:os';
import { Conference } from './conference';
import { Endpoint } from './endpoint';
import type { AudioCodecName, Direction } from './sdp/sdp';
import { PortPool } from './worker/port-pool';
import { RealtimeGuard, type ScheduleChange, type WorkerRealtimeOptions } from './worker/realtime';
import type { EventMessage } from './worker/protocol';
import type { TtsCacheBounds } from './tts/cache-trim';
import type { CacheBounds } from './sources/cache-index';
import { defaultRtpIo, ipv4ToInt, RTP_IO_KINDS, type RtpIoKind } from './worker/rtp-transport';
import { rtpIo, rtpIoError, rtpUring, rtpUringError, type UringCounters } from './native';
import { WorkerCallError, WorkerHost } from './worker/worker-host';

export interface MediaServerOptions {
  /** address the RTP sockets bind to (default 127.0.0.1) */
  bindAddress?: string;
  /** address written into SDP (default: bindAddress, or the first external IPv4 when binding 0.0.0.0) */
  advertisedAddress?: string;
  rtpPorts?: { min: number; max: number };
  /** media worker threads (default: one per core) */
  workers?: number;
  codecs?: AudioCodecName[];
  /** cache for converted prompts, fetched URLs and speech (default <tmp>/media-engine-cache-<uid>, 0700, ours: source-resolver.ts) */
  cacheDir?: string;
  /** TTS provider for say() (default 'espeak-ng'; see media-engine/tts) */
  ttsProvider?: string;
  /** The bound of the speech it caches (media-engine/tts/cache-trim.ts; default 10000 prompts, 1 GiB) */
  ttsCache?: TtsCacheBounds;
  /** The bound of the play URLs it fetches and converts (media-engine/sources/cache-index.ts; default 10000 URLs, 1 GiB) */
  promptCache?: CacheBounds;
  /** The egress policy's settings (core/net) for play URLs; each worker builds its policy from them. Default: public addresses only. */
  egress?: EgressSettings;
  /**
   * Send phases per 20 ms (default 4): each endpoint is served at its own 20/phases ms slot of the
   * period, so a worker's packets leave spread over the period instead of in one burst. 1 = all at once.
   */
  tickPhases?: number;
  /**
   * Nice value of each worker thread (-20..19; Linux sets it per thread). A negative value lets the
   * 20 ms clock win the CPU against ordinary processes without real-time scheduling: CFS weights, so a
   * busy worker can never starve the host (at -10 a CPU-bound neighbour still gets about a tenth).
   * Needs CAP_SYS_NICE (or root) for values below 0; without it the workers keep 0 and warn. Default: unchanged.
   */
  workerNice?: number;
  /**
   * Real-time scheduling (SCHED_RR) for each worker thread, watched: above `maxCpuShare` of a core the
   * thread drops back to ordinary scheduling (its nice value) until it has cooled down, so a worker
   * that stops sleeping cannot starve the host (worker/realtime.ts). Linux, CAP_SYS_NICE or
   * RLIMIT_RTPRIO; without them a 'workerSchedule' change with reason 'error' says so and nothing else
   * changes. Default: off.
   */
  workerRealtime?: WorkerRealtimeOptions;
  /**
   * The RTP sockets of the workers: 'uring' (media-engine/native/rtp_uring.c, built at set-up with
   * liburing) puts every socket of a worker on one io_uring, sending a tick's packets and taking what
   * arrived on all of them in one system call; 'native' (rtp_io.c) reads each leg's socket when the leg
   * is served and sends with one system call per packet, without waking the event loop per packet;
   * 'dgram' is node:dgram. Default: the first of these that was built. Asking for one that was not
   * built is an error; a worker whose kernel refuses io_uring at run time (disabled, seccomp, too
   * old) warns once and runs 'native' (`rtpIoFallback` in its stats).
   */
  rtpIo?: RtpIoKind;
  /** Submission queue size of each worker's io_uring (1..32768 by the kernel; default 1024). */
  rtpRingEntries?: number;
  /**
   * On 'uring', two G.711 legs bridged with nothing else to do, and two Opus legs forwarding each other's
   * packets, are served in C (native/rtp_legs.c, worker/c-legs.ts; `cLegs` in the worker's stats).
   * Default true; false keeps every leg in JS.
   */
  plainLegsInC?: boolean;
}

export interface CreateEndpointOptions {
  /** the far end's offer; without it the endpoint makes an offer (local.sdp) and modify() takes the answer */
  remoteSdp?: string;
  codecs?: AudioCodecName[];
  direction?: Direction;
  inbandDtmf?: boolean;
  /** place on the same worker as this endpoint or conference (needed for bridge and conference) */
  near?: Endpoint | Conference;
}

export interface WorkerStats {
  /** the RTP socket kind the worker really uses */
  rtpIo: RtpIoKind;
  /** why the worker was asked for 'uring' and runs 'native' (the kernel refused io_uring), or null */
  rtpIoFallback: string | null;
  /** the worker's io_uring counters (io_uring_enter calls, packets) when it runs 'uring', else null */
  rtpRing: UringCounters | null;
  legs: number;
  /** of them, the legs served in C now (plainLegsInC) */
  cLegs: number;
  /** whole states read back from the C legs (c-legs.ts sync: stats, the receive watch), not per packet */
  cLegSyncs: number;
  conferences: number;
  ticks: number;
  resyncs: number;
  lateP50: number;
  lateP99: number;
  lateMax: number;
  tickCostP50: number;
  tickCostP99: number;
}

export interface MediaServerEvents {
  /** a media worker died; its endpoints ended ('destroy' with reason 'worker-died') and its ports are free */
  workerExit: [{ index: number; error: Error }];
  /** the scheduling of a worker thread changed (workerRealtime): put on real time, dropped back by the watchdog, or refused */
  workerSchedule: [ScheduleChange];
  /** the same error, for those who listen for errors */
  error: [Error];
}

function defaultAddress(bind: string): string {
  if (bind !== '0.0.0.0') return bind;
  for (const list of Object.values(os.networkInterfaces())) {
    for (const i of list ?? []) if (i.family === 'IPv4' && !i.internal) return i.address;
  }
  return '127.0.0.1';
}

export class MediaServer extends EventEmitter<MediaServerEvents> {
  private readonly hosts: WorkerHost[];
  readonly pool: PortPool;
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly conferences = new Map<string, Conference>();
  private readonly confByName = new Map<string, Conference>();
  private readonly guards: RealtimeGuard[] = [];
  readonly bindAddress: string;
  readonly advertisedAddress: string;
  /** The workers' RTP socket kind (MediaServerOptions.rtpIo). */
  readonly rtpIo: RtpIoKind;
  private closed = false;

  private constructor(private readonly opts: MediaServerOptions) {
    super();
    if (opts.rtpIo !== undefined && !RTP_IO_KINDS.includes(opts.rtpIo)) throw new Error(`rtpIo must be 'uring', 'native' or 'dgram', not ${String(opts.rtpIo)}`);
    if (opts.rtpIo === 'native' && !rtpIo) throw new Error(`native RTP sockets are not built (${rtpIoError}); run scripts/build-native.sh`);
    if (opts.rtpIo === 'uring' && !rtpUring) throw new Error(`io_uring RTP sockets are not built (${rtpUringError}); install liburing-dev and run scripts/build-native.sh`);
    const ring = opts.rtpRingEntries;
    if (ring !== undefined && !(Number.isInteger(ring) && ring >= 1 && ring <= 1 << 20)) throw new Error(`rtpRingEntries must be an integer 1..${1 << 20}, not ${String(ring)}`);
    this.rtpIo = opts.rtpIo ?? defaultRtpIo();
    this.bindAddress = opts.bindAddress ?? '127.0.0.1';
    this.advertisedAddress = opts.advertisedAddress ?? defaultAddress(this.bindAddress);
    const range = opts.rtpPorts ?? { min: 20000, max: 30000 };
    this.pool = new PortPool(range.min, range.max);
    const n = Math.max(1, opts.workers ?? os.availableParallelism());
    this.hosts = Array.from(
      { length: n },
      (_, i) =>
        new WorkerHost(i, {
          cacheDir: opts.cacheDir,
          ttsProvider: opts.ttsProvider,
          ttsCache: opts.ttsCache,
          promptCache: opts.promptCache,
          tickPhases: opts.tickPhases,
          egress: opts.egress,
          nice: opts.workerNice,
          rtpIo: this.rtpIo,
          ringEntries: ring,
          cLegs: opts.plainLegsInC,
        }),
    );
    for (const h of this.hosts) {
      h.on('event', (m) => this.route(m));
      h.on('exit', (err) => this.onWorkerExit(h, err));
    }
  }

  static async start(opts: MediaServerOptions = {}): Promise<MediaServer> {
    // the sockets bind to an IPv4 address: a host name (RTP_BIND_HOST=localhost) is resolved once, here
    let bindAddress = opts.bindAddress;
    if (bindAddress !== undefined && ipv4ToInt(bindAddress) === null) {
      try {
        bindAddress = (await dns.promises.lookup(bindAddress, { family: 4 })).address;
      } catch (e) {
        throw new Error(`media bind address ${JSON.stringify(opts.bindAddress)} is not an IPv4 address and does not resolve to one (${(e as Error).message})`);
      }
    }
    const ms = new MediaServer({ ...opts, bindAddress });
    try {
      await Promise.all(ms.hosts.map((h) => h.ready));
      if (opts.workerRealtime) await ms.realtime(opts.workerRealtime);
    } catch (e) {
      await ms.destroy();
      throw e;
    }
    return ms;
  }

  private async realtime(o: WorkerRealtimeOptions): Promise<void> {
    for (const h of this.hosts) {
      if (h.tid === undefined) {
        this.emit('workerSchedule', { index: h.index, tid: 0, policy: 'other', reason: 'error', message: 'the thread id is unknown (not Linux)' });
        continue;
      }
      const g = new RealtimeGuard(h.index, h.tid, o);
      g.on('change', (c) => this.emit('workerSchedule', c));
      this.guards.push(g);
      await g.start();
    }
  }

  /** Each worker thread's Linux thread id (undefined off Linux), e.g. to read its CPU time in /proc. */
  get workerTids(): (number | undefined)[] {
    return this.hosts.map((h) => h.tid);
  }

  /** Each worker's scheduling under workerRealtime ('rr' or 'other'; empty without it). */

  get schedules(): { index: number; tid: number; policy: 'rr' | 'other'; refused?: string }[] {
    return this.guards.map((g) => ({ index: g.index, tid: g.tid, policy: g.current, ...(g.refused ? { refused: g.refused } : {}) }));
  }

  get workerCount(): number {
    return this.hosts.length;
  }

  get ports() {
    return { capacity: this.pool.capacity, available: this.pool.available, allocated: this.pool.allocated };
  }

  private route(m: EventMessage): void {
    if (m.kind === 'leg') this.endpoints.get(m.target)?.deliver(m);
    else this.conferences.get(m.target)?.deliver(m);
  }

  private onWorkerExit(h: WorkerHost, err: Error): void {
    if (this.closed) return;
    for (const g of this.guards) if (g.index === h.index) g.stop();
    // the thread's sockets died with it: give its ports back and tell the owners
    for (const ep of [...this.endpoints.values()]) {
      if (ep.host !== h) continue;
      this.endpoints.delete(ep.uuid);
      this.pool.release(ep.local.port);
      ep.markDestroyed({ reason: 'worker-died', message: err.message });
    }
    for (const c of [...this.conferences.values()]) if (c.host === h) c.markDestroyed();
    // new endpoints go to the workers still running (pickHost skips dead ones)
    this.emit('workerExit', { index: h.index, error: err });
    if (this.listenerCount('error') > 0) this.emit('error', err);
  }

  private pickHost(near?: Endpoint | Conference): WorkerHost {
    if (near) {
      if (!near.host.alive) throw new Error('the worker of `near` is gone');
      return near.host;
    }
    const alive = this.hosts.filter((h) => h.alive);
    if (!alive.length) throw new Error('no media worker is running');
    return alive.reduce((a, b) => (b.legCount < a.legCount ? b : a));
  }

  async createEndpoint(opts: CreateEndpointOptions = {}): Promise<Endpoint> {
    if (this.closed) throw new Error('media server is closed');
    const host = this.pickHost(opts.near);
    const uuid = randomUUID();
    for (let attempt = 0; attempt < 20; attempt++) {
      const port = this.pool.acquire();
      if (port === null) throw new Error('no free RTP port');
      try {
        const r = await host.call('createLeg', uuid, {
          address: this.advertisedAddress,
          bindAddress: this.bindAddress,
          port,
          remoteSdp: opts.remoteSdp,
          codecs: opts.codecs ?? this.opts.codecs,
          direction: opts.direction,
          inbandDtmf: opts.inbandDtmf,
        });
        host.legCount++;
        const ep = new Endpoint(uuid, host, r.localSdp, this.advertisedAddress, port, opts.remoteSdp ?? null, r.media, (e) => this.destroyEndpoint(e));
        this.endpoints.set(uuid, ep);
        return ep;
      } catch (e) {
        if ((e as WorkerCallError).code === 'EADDRINUSE') {
          this.pool.reject(port);
          continue;
        }
        this.pool.release(port);
        throw e;
      }
    }
    throw new Error('no bindable RTP port in range');
  }

  private async destroyEndpoint(ep: Endpoint): Promise<void> {
    if (!this.endpoints.delete(ep.uuid)) return;
    try {
      await ep.host.call('destroyLeg', ep.uuid);
    } finally {
      ep.host.legCount--;
      this.pool.release(ep.local.port);
      ep.markDestroyed();
    }
  }

  /** Creates (or returns the existing) conference by name. */
  async createConference(name: string = randomUUID(), opts: { near?: Endpoint } = {}): Promise<Conference> {
    if (this.closed) throw new Error('media server is closed');
    const existing = this.confByName.get(name);
    if (existing) return existing;
    const host = this.pickHost(opts.near);
    const uuid = randomUUID();
    await host.call('createConference', uuid);
    const c = new Conference(uuid, name, host, (x) => this.dropConference(x));
    this.conferences.set(uuid, c);
    this.confByName.set(name, c);
    return c;
  }

  private dropConference(c: Conference): void {
    this.conferences.delete(c.uuid);
    if (this.confByName.get(c.name) === c) this.confByName.delete(c.name);
  }

  getConference(name: string): Conference | undefined {
    return this.confByName.get(name);
  }

  async stats(): Promise<WorkerStats[]> {
    return Promise.all(this.hosts.filter((h) => h.alive).map((h) => h.call('workerStats')));
  }

  /** Each worker's heap after a GC (with --expose-gc): what its endpoints hold, for memory benchmarks. */
  async memory(): Promise<{ heapUsed: number; external: number; arrayBuffers: number; legs: number }[]> {
    return Promise.all(this.hosts.filter((h) => h.alive).map((h) => h.call('memory')));
  }

  async resetStats(): Promise<void> {
    await Promise.all(this.hosts.filter((h) => h.alive).map((h) => h.call('resetStats')));
  }

  /** Destroys every endpoint and conference and stops the workers. */
  async destroy(): Promise<void> {
    if (this.closed) return;
    await Promise.allSettled([...this.endpoints.values()].map((ep) => ep.destroy()));
    await Promise.allSettled([...this.conferences.values()].map((c) => c.destroy()));
    this.closed = true;
    for (const g of this.guards) g.stop();
    await Promise.allSettled(this.hosts.map((h) => h.terminate()));
  }
}
