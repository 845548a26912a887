/**
 * The fetch cache's index and bound (fetch-cache.ts fetches):
 *   <cacheDir>/url-<sha256 of url>.json   one URL's entry: which blob, its validators, when checked and used
 *   <cacheDir>/blob-<sha256>.<type>        the bytes (BLOB_NAME: nothing else is ever read as a blob)
 *   <cacheDir>/conv-<sha256>.wav, convw-…  a blob's conversions (prepare.ts), removed with it
 * An entry whose blob is not a name of that form, or whose hex is not its sha256, is absent: it is
 * removed, so a planted entry cannot point anywhere else.
 *
 * The cache is bounded (CacheBounds): after each download, least recently used entries go until the
 * entries and the bytes of their blobs (and conversions) are within the bounds; a blob this process
 * holds (a lease: fetchToCache's result until released) is kept, and so is its entry. A blob no entry
 * names (its URL's content changed, or a crash between writes) goes too, unless held, and so do the
 * temporary files (`dl-<pid>-…`, `nostore-<pid>-…`) of a process no longer running (a crash's).
 */
import fs from 'node:fs';
import path from 'node:path';

export interface CacheBounds {
  /** Most URL entries kept. Default 10000. */
  maxCacheEntries?: number;
  /** Most bytes of blobs and their conversions kept. Default 1 GiB. */
  maxCacheBytes?: number;
}

export const DEFAULT_MAX_ENTRIES = 10_000;
export const DEFAULT_MAX_BYTES = 1024 * 1024 * 1024;

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
const BLOB_NAME = /^blob-([0-9a-f]{64})\.[a-z0-9]{1,5}$/;

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

function validEntry(e: UrlEntry): boolean {
  const m = e && typeof e.blob === 'string' ? BLOB_NAME.exec(e.blob) : null;
  return !!m && m[1] === e.sha256 && typeof e.checkedAt === 'number';
}

export function writeEntry(indexPath: string, entry: UrlEntry): void {
  fs.writeFileSync(indexPath, JSON.stringify(entry), { mode: 0o600 });
}

/** Blobs held by this process, per cache directory: name → holders. */
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

const isHeld = (cacheDir: string, blob: string) => (leases.get(cacheDir)?.get(blob) ?? 0) > 0;

/** A blob's bytes on disk with its conversions (0 for what is gone). */
function blobBytes(cacheDir: string, blob: string): number {
  const sha = BLOB_NAME.exec(blob)![1];
  let n = 0;
  for (const f of [blob, `conv-${sha}.wav`, `convw-${sha}.wav`]) n += fs.statSync(path.join(cacheDir, f), { throwIfNoEntry: false })?.size ?? 0;
  return n;
}

function removeBlob(cacheDir: string, blob: string): void {
  const sha = BLOB_NAME.exec(blob)![1];
  for (const f of [blob, `conv-${sha}.wav`, `convw-${sha}.wav`]) fs.rmSync(path.join(cacheDir, f), { force: true });
}

/** A download's or a no-store body's file (and its conversion), named with the pid of the process using it. */
const LEFT_BY_PROCESS = /^(?:dl|nostore)-(\d+)-[0-9a-f]{12}\./;

/** Whether process `pid` runs (on this host: the cache is a local directory). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface Listed {
  index: string;
  entry: UrlEntry;
}

/** Every valid entry of the directory (invalid ones removed) and every blob file's name; a dead process's temporary files removed. */
function listCache(cacheDir: string): { entries: Listed[]; blobs: string[] } {
  const entries: Listed[] = [];
  const blobs: string[] = [];
  for (const f of fs.readdirSync(cacheDir)) {
    if (BLOB_NAME.test(f)) blobs.push(f);
    const own = LEFT_BY_PROCESS.exec(f);
    if (own && !running(Number(own[1]))) fs.rmSync(path.join(cacheDir, f), { force: true });
    if (!/^url-[0-9a-f]{64}\.json$/.test(f)) continue;
    const index = path.join(cacheDir, f);
    const entry = readEntry(cacheDir, index);
    if (entry) entries.push({ index, entry });
    else fs.rmSync(index, { force: true });
  }
  return { entries, blobs };
}

/**
 * Brings `cacheDir` within `bounds`: unnamed blobs not held go, then least recently used entries (and
 * their blobs, once no entry names them) whose blob is not held, until both bounds are met.
 */
export function evict(cacheDir: string, bounds: CacheBounds): void {
  const maxEntries = bounds.maxCacheEntries ?? DEFAULT_MAX_ENTRIES;
  const maxBytes = bounds.maxCacheBytes ?? DEFAULT_MAX_BYTES;
  const { entries, blobs } = listCache(cacheDir);
  const refs = new Map<string, number>();
  for (const { entry } of entries) refs.set(entry.blob, (refs.get(entry.blob) ?? 0) + 1);
  let bytes = 0;
  for (const b of blobs) {
    if (!refs.has(b) && !isHeld(cacheDir, b)) removeBlob(cacheDir, b);
    else bytes += blobBytes(cacheDir, b);
  }
  let count = entries.length;
  entries.sort((a, b) => (a.entry.usedAt ?? a.entry.checkedAt) - (b.entry.usedAt ?? b.entry.checkedAt));
  for (const { index, entry } of entries) {
    if (count <= maxEntries && bytes <= maxBytes) return;
    if (isHeld(cacheDir, entry.blob)) continue;
    fs.rmSync(index, { force: true });
    count--;
    const left = refs.get(entry.blob)! - 1;
    refs.set(entry.blob, left);
    if (left > 0) continue;
    bytes -= blobBytes(cacheDir, entry.blob);
    removeBlob(cacheDir, entry.blob);
  }
}
