/**
 * When a bounded cache directory is trimmed, kept off the callers' hot paths: a write notes its bytes
 * (noteWrite); a trim starts in the background when this thread's writes since the last one may have
 * passed the bounds (what that trim left, plus what came since), or when the last one is older than
 * `everyMs` (other threads and processes fill the directory too). A trim that could not bring the
 * directory within its bounds (what it must keep, recently used, is more) is followed by the next only
 * after `everyMs`, not at every write: another at once would keep the same files. At most one trim of a directory runs
 * at a time in a thread; one asked meanwhile is considered again once it ends. What a trim removes is
 * the cache's own business (its `evict`); this only decides when, and keeps what it left.
 */
import fs from 'node:fs';

/** What a trim left in the directory. */
export interface TrimLeft {
  entries: number;
  bytes: number;
}

export interface TrimLimits {
  maxEntries: number;
  maxBytes: number;
}

interface DirState<B> {
  running: Promise<void> | null;
  /** a trim asked while one ran: considered once it ends */
  again: B | null;
  started: number;
  /** when the last trim started (0: never in this thread, or it failed) */
  lastAt: number;
  /** what the last trim left, and what this thread wrote since it started */
  left: TrimLeft;
  /** the last trim left the directory over its bounds */
  over: boolean;
  addedEntries: number;
  addedBytes: number;
}

export class DirTrims<B> {
  private readonly dirs = new Map<string, DirState<B>>();

  constructor(
    /** brings the directory within the bounds; resolves to what is left */
    private readonly evict: (dir: string, bounds: B) => Promise<TrimLeft>,
    private readonly limits: (bounds: B) => TrimLimits,
    private readonly everyMs: number,
  ) {}

  /** A write of `bytes` (a new entry) in `dir`: a trim in the background when one may be needed. */
  noteWrite(dir: string, bounds: B, bytes: number): void {
    const d = this.state(dir);
    d.addedEntries++;
    d.addedBytes += bytes;
    if (d.running) d.again = bounds;
    else if (this.due(d, bounds)) this.start(dir, d, bounds);
  }

  /** Resolves once no trim of `dir` runs in this thread (nor one asked meanwhile). */
  async settled(dir: string): Promise<void> {
    for (let d = this.dirs.get(dir); d?.running;) await d.running;
  }

  /** How many trims of `dir` this thread started. */
  started(dir: string): number {
    return this.dirs.get(dir)?.started ?? 0;
  }

  private state(dir: string): DirState<B> {
    let d = this.dirs.get(dir);
    if (!d) this.dirs.set(dir, (d = { running: null, again: null, started: 0, lastAt: 0, left: { entries: 0, bytes: 0 }, over: false, addedEntries: 0, addedBytes: 0 }));
    return d;
  }

  private due(d: DirState<B>, bounds: B): boolean {
    if (!d.lastAt || Date.now() - d.lastAt >= this.everyMs) return true;
    if (d.over) return false;
    const l = this.limits(bounds);
    return d.left.entries + d.addedEntries > l.maxEntries || d.left.bytes + d.addedBytes > l.maxBytes;
  }

  private start(dir: string, d: DirState<B>, bounds: B): void {
    d.started++;
    d.lastAt = Date.now();
    d.addedEntries = 0;
    d.addedBytes = 0;
    d.running = this.evict(dir, bounds).then(
      (left) => {
        d.left = left;
        const l = this.limits(bounds);
        d.over = left.entries > l.maxEntries || left.bytes > l.maxBytes;
        d.running = null;
        const next = d.again;
        d.again = null;
        if (next && this.due(d, next)) this.start(dir, d, next);
      },
      () => {
        // the directory gone or unreadable: the next write's trim tries again
        d.lastAt = 0;
        d.running = null;
        d.again = null;
      },
    );
  }
}

/** Files handled between two turns of the event loop by inBatches. */
export const TRIM_BATCH = 16;

/** `f(x)` for each of `xs`, TRIM_BATCH at a time, the event loop served between batches. */
export async function inBatches<T, R>(xs: T[], f: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < xs.length; i += TRIM_BATCH) out.push(...(await Promise.all(xs.slice(i, i + TRIM_BATCH).map(f))));
  return out;
}

/** A file's stat, or null when it is gone (read in the background). */
export const statOf = (file: string): Promise<fs.Stats | null> => fs.promises.stat(file).catch(() => null);

/** A turn of the event loop. */
export const yieldTurn = (): Promise<void> => new Promise<void>((r) => setImmediate(r));
