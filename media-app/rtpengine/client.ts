/**
 * RtpengineClient: one rtpengine (its ng control address) as media-app sees it. It speaks ng over UDP
 * through npm `rtpengine-client`, bounds every command in time, turns an ng `error` reply into an
 * NgError, and watches the daemon: a ping every `pingMs`; `misses` pings in a row unanswered and the
 * client is `down` (every relay leg on it ends), the first pong after that is `up` again.
 *
 *   unknown ──pong──► up ──misses──► down ──pong──► up
 *
 * It also sweeps its live relay legs every `sweepMs` with `query`: a leg rtpengine no longer knows
 * (its own media timeout deleted the call, or it restarted between two pings) ends.
 */
import { EventEmitter } from 'node:events';
import { Client, type NgParams, type NgReply, type NgTarget } from 'rtpengine-client';
import { parseHostPort } from '../../core/config';

export type RtpengineHealth = 'unknown' | 'up' | 'down';

export interface RtpengineClientEvents {
  /** The health moved (down: `misses` pings in a row unanswered; up: a pong). */
  health: [to: RtpengineHealth, from: RtpengineHealth];
}

/** rtpengine refused a command (`result: error`), or gave no answer in time. */
export class NgError extends Error {
  constructor(
    readonly command: string,
    readonly reason: string,
    /** true when rtpengine did not answer at all (down, unreachable). */
    readonly noAnswer = false,
  ) {
    super(`rtpengine ${command}: ${reason}`);
  }
}

export interface RtpengineClientOptions {
  /** `host:port` of rtpengine's ng socket (RTPENGINE_NG). */
  ng: string;
  /** Per-command timeout (default 1000 ms). */
  timeoutMs?: number;
  /** Health ping period (default 300 ms) and how many misses in a row make it down (default 2). */
  pingMs?: number;
  misses?: number;
  /** Query sweep of live legs (default 5000 ms). */
  sweepMs?: number;
}

/** What the client asks of a live relay leg in its sweep. */
export interface SweptLeg {
  readonly ngCallId: string;
  /** rtpengine no longer knows this leg's call. */
  lost(reason: string): void;
}

export class RtpengineClient extends EventEmitter<RtpengineClientEvents> {
  readonly target: NgTarget;
  private readonly client: Client;
  private state: RtpengineHealth = 'unknown';
  private missed = 0;
  private readonly pinger: NodeJS.Timeout;
  private readonly sweeper: NodeJS.Timeout;
  private readonly legs = new Set<SweptLeg>();
  private closed = false;
  private readonly timeoutMs: number;
  private readonly misses: number;

  constructor(opts: RtpengineClientOptions) {
    super();
    const t = parseHostPort(opts.ng);
    if (!t) throw new Error(`RTPENGINE_NG: not a host:port (${opts.ng})`);
    this.target = t;
    this.timeoutMs = opts.timeoutMs ?? 1000;
    this.misses = opts.misses ?? 2;
    this.client = new Client({ localAddress: t.host.includes(':') ? '::' : '0.0.0.0', localPort: 0, timeout: this.timeoutMs });
    // a late or unknown reply is reported as an 'error' event by the library: nothing to do with it
    this.client.on('error', () => undefined);
    const pingMs = opts.pingMs ?? 300;
    this.pinger = setInterval(() => void this.checkHealth(Math.min(pingMs * 2, this.timeoutMs)), pingMs);
    this.pinger.unref();
    this.sweeper = setInterval(() => void this.sweep(), opts.sweepMs ?? 5000);
    this.sweeper.unref();
    void this.checkHealth(this.timeoutMs);
  }

  get health(): RtpengineHealth {
    return this.state;
  }

  get ng(): string {
    return this.target.host.includes(':') ? `[${this.target.host}]:${this.target.port}` : `${this.target.host}:${this.target.port}`;
  }

  /** One ping; true on pong. Never rejects. */
  async ping(timeoutMs = this.timeoutMs): Promise<boolean> {
    try {
      const r = await this.bounded(this.client.ping(this.target), timeoutMs, 'ping');
      return r.result === 'pong';
    } catch {
      return false;
    }
  }

  /** An ng command; rejects with NgError on `result: error` or no answer. */
  async command(name: 'offer' | 'answer' | 'delete' | 'query', params: NgParams): Promise<NgReply> {
    if (this.closed) throw new NgError(name, 'client closed', true);
    let r: NgReply;
    try {
      r = await this.bounded(this.client[name](this.target, params), this.timeoutMs, name);
    } catch (err) {
      if (err instanceof NgError) throw err;
      throw new NgError(name, (err as Error)?.message ?? String(err), true);
    }
    if (r.result === 'error' || r.result === 'load limit') throw new NgError(name, r['error-reason'] ?? r.result);
    return r;
  }

  /** A leg the sweep checks while it lives. */
  track(leg: SweptLeg): () => void {
    this.legs.add(leg);
    return () => this.legs.delete(leg);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.pinger);
    clearInterval(this.sweeper);
    this.client.close();
  }

  private bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
    let t: NodeJS.Timeout;
    const timeout = new Promise<never>((_, rej) => (t = setTimeout(() => rej(new NgError(what, `no answer from ${this.ng} in ${ms} ms`, true)), ms)));
    return Promise.race([p, timeout]).finally(() => clearTimeout(t));
  }

  private async checkHealth(timeoutMs: number): Promise<void> {
    if (this.closed) return;
    const ok = await this.ping(timeoutMs);
    if (this.closed) return;
    if (ok) {
      this.missed = 0;
      this.move('up');
    } else if (++this.missed >= this.misses || this.state === 'unknown') {
      this.move('down');
    }
  }

  private move(to: RtpengineHealth): void {
    const from = this.state;
    if (from === to) return;
    this.state = to;
    this.emit('health', to, from);
  }

  private async sweep(): Promise<void> {
    if (this.closed || this.state !== 'up') return;
    for (const leg of [...this.legs]) {
      try {
        await this.command('query', { 'call-id': leg.ngCallId });
      } catch (err) {
        // an unknown call is lost; no answer is the health check's business
        if (err instanceof NgError && !err.noAnswer) leg.lost(`rtpengine_lost_call: ${err.reason}`);
      }
    }
  }
}
