/**
 * The event-socket connection after start-up (README.md beside, "Losing the switch"): fsmrf's
 * MediaServer reports a lost connection only by its 'end' event and a console.error line, and
 * drachtio-modesl would reconnect on a growing delay with no cap behind a retry timer nothing owns.
 * Here modesl's reconnect is off (connect.ts) and this link owns the reconnect: on 'end' it reports
 * `down` (the backend refuses new legs and ends the live ones), then connects again through
 * connectSwitch on its own timer, MEDIA_SERVER_RECONNECT_MIN_MS doubling up to
 * MEDIA_SERVER_RECONNECT_MAX_MS, and reports `up` with the new MediaServer. close() cancels the timer
 * and drops a connect still in flight.
 */
import { EventEmitter } from 'node:events';
import type { MediaServer as FsMediaServer } from 'drachtio-fsmrf';
import { connectSwitch, type ConnectOptions, type SwitchAddress } from './connect';

/** What the link reports through (media-app's logger). */
export interface LinkLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ReconnectDelays {
  /** the first retry's delay, doubled after each failed one (MEDIA_SERVER_RECONNECT_MIN_MS) */
  minMs: number;
  /** the cap on that delay (MEDIA_SERVER_RECONNECT_MAX_MS) */
  maxMs: number;
}

export interface LinkEvents {
  /** the connection was lost (the reason, for logs): new legs are refused until `up` */
  down: [reason: string];
  /** connected again, on a new MediaServer */
  up: [ms: FsMediaServer];
}

export type LinkState = 'up' | 'down' | 'closed';

/**
 * Where the retry timer is armed: the process's timers, or a test's virtual ones (timers that fire
 * when the test moves time on: the retry delays and the absence after close(), without waiting).
 */
export interface LinkTimers {
  set(ms: number, fn: () => void): unknown;
  clear(handle: unknown): void;
}

export const REAL_TIMERS: LinkTimers = { set: (ms, fn) => setTimeout(fn, ms), clear: (h) => clearTimeout(h as NodeJS.Timeout) };

export class SwitchLink extends EventEmitter<LinkEvents> {
  private state_: LinkState = 'up';
  /** the reconnect phase's timer: armed on loss and after a failed attempt, cleared by close() */
  private retry: unknown = null;
  private delay: number;
  private readonly timers: LinkTimers;

  constructor(
    private ms_: FsMediaServer,
    private readonly srf: unknown,
    private readonly to: SwitchAddress,
    private readonly opts: ConnectOptions & { reconnect: ReconnectDelays; log: LinkLog; timers?: LinkTimers },
  ) {
    super();
    this.delay = opts.reconnect.minMs;
    this.timers = opts.timers ?? REAL_TIMERS;
    this.watch(ms_);
  }

  get state(): LinkState {
    return this.state_;
  }

  /** the MediaServer while up (the last one otherwise) */
  get ms(): FsMediaServer {
    return this.ms_;
  }

  /** the retry timer is armed (tests: none is left after close) */
  get retrying(): boolean {
    return this.retry !== null;
  }

  private readonly where = () => `${this.to.host}:${this.to.port}`;

  private watch(ms: FsMediaServer): void {
    ms.once('end', () => this.lost(ms, 'the event socket closed'));
    // MediaServer's 'error' is its readiness timer's (never after ready); logged, never thrown
    ms.on('error', (err: unknown) => this.opts.log.error({ media_server: this.where(), err: err instanceof Error ? err.message : String(err) }, 'media server error'));
  }

  private lost(ms: FsMediaServer, reason: string): void {
    if (this.state_ !== 'up' || ms !== this.ms_) return;
    this.state_ = 'down';
    // its outbound-socket server and listeners go; the connection is closed already (modesl does not retry)
    ms.disconnect();
    this.opts.log.error({ media_server: this.where(), reason, retry_ms: this.delay }, 'lost the media server: new calls refused, live calls ended, reconnecting');
    this.emit('down', reason);
    this.schedule();
  }

  private schedule(): void {
    if (this.state_ !== 'down') return;
    const wait = this.delay;
    this.delay = Math.min(this.delay * 2, this.opts.reconnect.maxMs);
    this.retry = this.timers.set(wait, () => {
      this.retry = null;
      void this.attempt();
    });
  }

  private async attempt(): Promise<void> {
    try {
      const ms = await connectSwitch(this.srf, this.to, this.opts);
      if (this.state_ !== 'down') return ms.disconnect(); // closed meanwhile
      this.ms_ = ms;
      this.state_ = 'up';
      this.delay = this.opts.reconnect.minMs;
      this.watch(ms);
      this.opts.log.info({ media_server: this.where() }, 'media server connected again');
      this.emit('up', ms);
    } catch (err) {
      if (this.state_ !== 'down') return;
      this.opts.log.warn({ media_server: this.where(), err: err instanceof Error ? err.message : String(err), retry_ms: this.delay }, 'media server still unreachable');
      this.schedule();
    }
  }

  /** For good: the retry timer cancelled, the connection closed, no reconnect after. */
  close(): void {
    const was = this.state_;
    this.state_ = 'closed';
    if (this.retry !== null) this.timers.clear(this.retry);
    this.retry = null;
    if (was === 'up') this.ms_.disconnect();
  }
}
