/**
 * The fetch cache's index and bound (fetch-cache.ts fetches):
 *   <cacheDir>/url-<sha256 of url>.json   one URL's entry: which blob, its validators, when checked and used
 *   <cacheDir>/blob-<sha256>.<type>        the bytes (BLOB_NAME: nothing else is ever read as a blob)
 *   <cacheDir>/conv-<sha256>.wav, convw-…  a blob's conversions (prepare.ts), removed with it (or alone
 *                                          once no blob of that sha256 is left)
 * An entry whose blob is not a name of that form, or whose hex is not its sha256, is absent: it is
 * removed, so a planted entry cannot point anywhere else.
 *
 * The cache is bounded (CacheBounds; the trim: cache-trim.ts). A lease (fetchToCache's result until
 * released) holds a blob in this thread only: leases are per process and per worker thread, while the
 * directory is shared by every media worker (and every process given it). What another thread or
 * process may be using is covered by a grace period instead (CacheBounds.evictGraceMs).
 */
import fs from 'node:fs';
import path from 'node:path';

export interface CacheBounds {
  /** Most URL entries kept. Default 10000. */
  maxCacheEntries?: number;
  /** Most bytes of blobs and their conversions kept. Default 1 GiB. */
  maxCacheBytes?: number;
  /**
   * An entry another thread or process used (or wrote) less than this long ago, and a blob or conversion
   * file written less than this long ago that this thread does not know, is never evicted: leases are
   * per thread, and this covers the others' fetch, conversion and opening of a prompt. Default 120000
   * (2 minutes: above a fetch's and a conversion's time limits, 15 s and 30 s by default).
   */
  evictGraceMs?: number;
}

export const DEFAULT_MAX_ENTRIES = 10_000;
export const DEFAULT_MAX_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_EVICT_GRACE_MS = 120_000;

export interface UrlEntry {
  url: string;
  /** file name inside cacheDir, BLOB_NAME */
  blob: string;
  sha256: string;
  size: number;
  etag?: string;
  lastModified?: string;
  checkedAt: number;
  /** when last used (LRU order), ms with a fraction */
  usedAt?: number;
  /** the response's own freshness, ms (freshnessMs); absent: maxAgeMs alone */
  freshMs?: number;
  /** the URL that answered, when a redirect led elsewhere (its host is checked at each use too) */
  finalUrl?: string;
}

/** The blob names the cache writes: `blob-<sha256 hex>.<type>` (fetch-cache.ts typeOf). */
export const BLOB_NAME = /^blob-([0-9a-f]{64})\.[a-z0-9]{1,5}$/;

export const blobName = (sha256: string, type: string): string => `blob-${sha256}.${type}`;

/** A strictly later stamp at each call in this process (two uses in one millisecond stay ordered). */
let lastStamp = 0;
export function useStamp(now = Date.now()): number {
  lastStamp = Math.max(now, lastStamp + 0.001);
  return lastStamp;
}

/** The URL's index entry, or null when there is none, it is unreadable or names no blob of ours (then removed), or its blob is gone. */
export function readEntry(cacheDir: string, indexPath: string): UrlEntry | null {
  let entry: UrlEntry;
  try {
    entry = JSON.parse(fs.readFileSync(indexPath, 'utf8')) as UrlEntry;
  } catch {
    return null;
  }
  if (!validEntry(entry)) {
    fs.rmSync(indexPath, { force: true });
    return null;
  }
  return fs.existsSync(path.join(cacheDir, entry.blob)) ? entry : null;
}

export function validEntry(e: UrlEntry): boolean {
  const m = e && typeof e.blob === 'string' ? BLOB_NAME.exec(e.blob) : null;
  return !!m && m[1] === e.sha256 && typeof e.checkedAt === 'number';
}

/** The use stamp this thread last wrote into each index file (the trim tells its own uses from another thread's). */
const ownWrites = new Map<string, number | undefined>();

export function writeEntry(indexPath: string, entry: UrlEntry): void {
  fs.writeFileSync(indexPath, JSON.stringify(entry), { mode: 0o600 });
  ownWrites.set(indexPath, entry.usedAt);
}

/** Whether this thread wrote `entry` as it is on disk at `indexPath` (no other thread used it since). */
export function ownWrite(indexPath: string, entry: UrlEntry): boolean {
  return ownWrites.has(indexPath) && ownWrites.get(indexPath) === entry.usedAt;
}

/** The index file is gone: forget this thread's write of it. */
export function forgetWrite(indexPath: string): void {
  ownWrites.delete(indexPath);
}

/** Blobs held by this thread, per cache directory: name → holders. */
const leases = new Map<string, Map<string, number>>();

/** Holds `blob` of `cacheDir` until the returned release (idempotent) is called. */
export function lease(cacheDir: string, blob: string): () => void {
  let held = leases.get(cacheDir);
  if (!held) leases.set(cacheDir, (held = new Map<string, number>()));
  held.set(blob, (held.get(blob) ?? 0) + 1);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const n = (held.get(blob) ?? 1) - 1;
    if (n > 0) held.set(blob, n);
    else held.delete(blob);
    if (!held.size && leases.get(cacheDir) === held) leases.delete(cacheDir);
  };
}

export const isHeld = (cacheDir: string, blob: string) => (leases.get(cacheDir)?.get(blob) ?? 0) > 0;
