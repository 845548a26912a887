/**
 * Wakes waiters by key from the platform's events: one EventSubscriber on a Redis connection of its own
 * (XREAD BLOCK holds it), open only while at least one watch is held: the first watch opens it, the last
 * release closes it and its connection. `keyOf` says which key an event is about (null: none); each
 * event wakes that key's watchers. A wake is a hint to read the state again, never the state itself.
 * A reader whose start fails (Redis away) rejects the `ready` of the watches it was opened for and is
 * closed at once; the next watch opens a new one.
 * Used by evals' settle wait (evals/call-events.ts) and the Twilio redirect's flow wait
 * (control-api/twilio/flow-starts.ts).
 *
 *   const wakes = new KeyedWakes({ redis, stream: eventStreamKey(keyPrefix), logger, connectionName, label, keyOf });
 *   const w = wakes.watch(key, () => wake());
 *   try { await w.ready; ...read the state, wait for wake()... } finally { w.release(); }
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../logger';
import { EventSubscriber, type PlatformEvent } from './bus';

export interface KeyedWatch {
  /** Resolves once the reader reads: every event published from then on reaches the watcher. */
  ready: Promise<void>;
  /** Ends this watch (idempotent); the last one closes the reader. */
  release(): void;
}

export interface KeyedWakesStats {
  /** Watches not released. */
  waiters: number;
  /** Keys with at least one watch. */
  keys: number;
  /** Whether the reader (and its connection) is open. */
  reading: boolean;
  /** 'event' listeners on the reader (1 while reading, else 0). */
  listeners: number;
}

export interface KeyedWakesOptions {
  /** Duplicated for the reader's own connection. */
  redis: Redis;
  logger: Logger;
  /** The reader connection's name (CLIENT LIST shows it while it reads). */
  connectionName: string;
  /** Starts the reader's warning messages ("<label> reader error"). */
  label: string;
  /** The key an event wakes, or null. */
  keyOf(e: PlatformEvent): string | null;
  /** The reader's XREAD BLOCK, ms (default 500). */
  blockMs?: number;
  /** The stream read: eventStreamKey(REDIS_KEY_PREFIX), or a test's private stream. */
  stream: string;
}

interface Reader {
  redis: Redis;
  sub: EventSubscriber;
  ready: Promise<void>;
}

export class KeyedWakes {
  private readonly byKey = new Map<string, Set<() => void>>();
  private size = 0;
  private reader: Reader | null = null;

  constructor(private readonly opts: KeyedWakesOptions) {}

  private readonly onEvent = (e: PlatformEvent): void => {
    const key = this.opts.keyOf(e);
    const wakes = key === null ? undefined : this.byKey.get(key);
    if (wakes) for (const wake of [...wakes]) wake();
  };

  /** Watches `key`: `wake` runs on each event about it until the watch is released. */
  watch(key: string, wake: () => void): KeyedWatch {
    this.size++;
    let wakes = this.byKey.get(key);
    if (!wakes) this.byKey.set(key, (wakes = new Set()));
    const mine = () => wake();
    wakes.add(mine);
    const reader = (this.reader ??= this.open());
    let released = false;
    return {
      ready: reader.ready,
      release: () => {
        if (released) return;
        released = true;
        this.size--;
        wakes.delete(mine);
        if (wakes.size === 0 && this.byKey.get(key) === wakes) this.byKey.delete(key);
        if (this.size === 0 && this.reader) {
          this.shut(this.reader);
          this.reader = null;
        }
      },
    };
  }

  /** Watches not released. */
  get waiters(): number {
    return this.size;
  }

  /** Whether the reader (and its connection) is open. */
  get reading(): boolean {
    return this.reader !== null;
  }

  stats(): KeyedWakesStats {
    return { waiters: this.size, keys: this.byKey.size, reading: this.reader !== null, listeners: this.reader?.sub.listenerCount('event') ?? 0 };
  }

  private open(): Reader {
    const { logger, label } = this.opts;
    const redis = this.opts.redis.duplicate({ connectionName: this.opts.connectionName });
    redis.on('error', (err: unknown) => logger.warn({ err: String(err) }, `${label} reader connection error`));
    const sub = new EventSubscriber(redis, { blockMs: this.opts.blockMs ?? 500, stream: this.opts.stream });
    sub.on('event', this.onEvent);
    sub.on('error', (err: unknown) => logger.warn({ err: String(err) }, `${label} reader error`));
    const ready = sub.start();
    const r: Reader = { redis, sub, ready };
    // each watcher sees the failure through `ready`; the failed reader is let go of, so the next watch
    // (Redis back) opens one of its own rather than getting this rejection while older watches are held
    ready.catch(() => {
      if (this.reader !== r) return; // already shut: its last watch was released
      this.reader = null;
      sub.off('event', this.onEvent);
      redis.disconnect();
    });
    return r;
  }

  private shut(r: Reader): void {
    r.sub.off('event', this.onEvent);
    // stop() returns once the blocking read does: at once, as the connection goes
    void r.ready.then(
      () => r.sub.stop(),
      () => undefined,
    );
    r.redis.disconnect();
  }
}
