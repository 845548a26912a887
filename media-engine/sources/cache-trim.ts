/**
 * The fetch cache's bound (cache-index.ts: the layout), kept off the media thread's 20 ms ticks: the
 * directory is read with fs.promises (a few files at a time, the event loop served between them), at
 * most one trim at a time per directory in a thread, and only when it may be needed: a download asks
 * for one (noteDownload; when: core/files/dir-trims.ts, every TRIM_EVERY_MS or past the bounds).
 * Removing is synchronous, one entry (its index, blob and conversions) at a time, each checked just before: a lease of this thread keeps a blob; an entry
 * another thread or process used less than CacheBounds.evictGraceMs ago stays (its index re-read),
 * and so does a blob or conversion no entry names that was written that recently.
 */
import fs from 'node:fs';
import path from 'node:path';
import { processRunning } from '../../core/files/process-running';
import { DirTrims, inBatches, statOf, TRIM_BATCH, yieldTurn } from '../../core/files/dir-trims';
import { BLOB_NAME, DEFAULT_EVICT_GRACE_MS, DEFAULT_MAX_BYTES, DEFAULT_MAX_ENTRIES, forgetWrite, isHeld, ownWrite, validEntry, type CacheBounds, type UrlEntry } from './cache-index';

/** A trim of a directory starts at most this often, ms, unless this thread's downloads may have passed the bounds. */
export const TRIM_EVERY_MS = 60_000;
const BATCH = TRIM_BATCH;

const trims = new DirTrims<CacheBounds>(
  (dir, bounds) => evict(dir, bounds),
  (b) => ({ maxEntries: b.maxCacheEntries ?? DEFAULT_MAX_ENTRIES, maxBytes: b.maxCacheBytes ?? DEFAULT_MAX_BYTES }),
  TRIM_EVERY_MS,
);

/** A download of `bytes` was indexed in `cacheDir`: a trim in the background when one may be needed. */
export function noteDownload(cacheDir: string, bounds: CacheBounds, bytes: number): void {
  trims.noteWrite(cacheDir, bounds, bytes);
}

/** Resolves once no trim of `cacheDir` runs in this thread (nor one asked meanwhile). */
export function cacheTrimmed(cacheDir: string): Promise<void> {
  return trims.settled(cacheDir);
}

/** How many trims of `cacheDir` this thread started. */
export function trimsStarted(cacheDir: string): number {
  return trims.started(cacheDir);
}

interface Listed {
  index: string;
  entry: UrlEntry;
}

interface BlobFiles {
  name: string;
  /** the blob's and its conversions' bytes */
  bytes: number;
}

/** The blob's files: it and its conversions (those present). */
const filesOf = (blob: string) => {
  const sha = BLOB_NAME.exec(blob)![1];
  return [blob, `conv-${sha}.wav`, `convw-${sha}.wav`];
};

async function blobFiles(cacheDir: string, name: string): Promise<BlobFiles> {
  const sts = await Promise.all(filesOf(name).map((f) => statOf(path.join(cacheDir, f))));
  return { name, bytes: sts.reduce((n, s) => n + (s?.size ?? 0), 0) };
}

/** A download's or a no-store body's file (and its conversion), named with the pid of the process using it. */
const LEFT_BY_PROCESS = /^(?:dl|nostore)-(\d+)-[0-9a-f]{12}\./;
const INDEX_NAME = /^url-[0-9a-f]{64}\.json$/;
const CONV_NAME = /^convw?-([0-9a-f]{64})\.wav$/;

/** The entry at `index`, or null when it names no blob of ours or its blob is gone (then removed), or it is unreadable. */
async function listed(cacheDir: string, index: string, graceMs: number): Promise<Listed | null> {
  let entry: UrlEntry;
  try {
    entry = JSON.parse(await fs.promises.readFile(index, 'utf8')) as UrlEntry;
  } catch {
    // unreadable: gone, or being written by another thread (then recent)
    const st = await statOf(index);
    if (st && Date.now() - st.mtimeMs >= graceMs) await fs.promises.rm(index, { force: true });
    return null;
  }
  if (validEntry(entry) && (await statOf(path.join(cacheDir, entry.blob)))) return { index, entry };
  await fs.promises.rm(index, { force: true });
  return null;
}

/** The directory's names by kind (each name tested once: a trim of 10000 entries reads 20000 names). */
function byKind(names: string[]): { indexes: string[]; blobs: string[]; convs: string[]; left: string[] } {
  const out = { indexes: [] as string[], blobs: [] as string[], convs: [] as string[], left: [] as string[] };
  for (const f of names) {
    if (f.startsWith('url-')) {
      if (INDEX_NAME.test(f)) out.indexes.push(f);
    } else if (f.startsWith('blob-')) {
      if (BLOB_NAME.test(f)) out.blobs.push(f);
    } else if (f.startsWith('conv')) {
      if (CONV_NAME.test(f)) out.convs.push(f);
    } else {
      const own = LEFT_BY_PROCESS.exec(f);
      if (own && !processRunning(Number(own[1]))) out.left.push(f);
    }
  }
  return out;
}

/** Every valid entry, every blob's files, orphaned conversions past the grace and a dead process's temporary files removed. */
async function listCache(cacheDir: string, graceMs: number): Promise<{ entries: Listed[]; blobs: BlobFiles[] }> {
  const names = byKind(await fs.promises.readdir(cacheDir));
  await inBatches(names.left, (f) => fs.promises.rm(path.join(cacheDir, f), { force: true }));
  const shas = new Set(names.blobs.map((f) => BLOB_NAME.exec(f)![1]));
  const orphans = names.convs.filter((f) => !shas.has(CONV_NAME.exec(f)![1]));
  await inBatches(orphans, async (f) => {
    const st = await statOf(path.join(cacheDir, f));
    if (st && Date.now() - st.mtimeMs >= graceMs) await fs.promises.rm(path.join(cacheDir, f), { force: true });
  });
  const indexes = names.indexes.map((f) => path.join(cacheDir, f));
  const entries = (await inBatches(indexes, (i) => listed(cacheDir, i, graceMs))).filter((e): e is Listed => e !== null);
  const blobs = await inBatches(names.blobs, (f) => blobFiles(cacheDir, f));
  return { entries, blobs };
}

/**
 * Whether the entry at `index`, read again now, is to stay: used or rewritten since it was listed (no
 * longer the least recently used), or used by another thread or process less than `graceMs` ago.
 */
function keptNow(index: string, was: UrlEntry, graceMs: number): boolean {
  let e: UrlEntry;
  try {
    e = JSON.parse(fs.readFileSync(index, 'utf8')) as UrlEntry;
  } catch {
    return false;
  }
  if (e.blob !== was.blob || e.usedAt !== was.usedAt) return true;
  return !ownWrite(index, e) && Date.now() - Math.max(e.usedAt ?? 0, e.checkedAt ?? 0) < graceMs;
}

/** Whether an unnamed blob's files, stat'ed again now, were written less than `graceMs` ago. */
function writtenRecently(cacheDir: string, blob: string, graceMs: number): boolean {
  const newest = Math.max(0, ...filesOf(blob).map((f) => fs.statSync(path.join(cacheDir, f), { throwIfNoEntry: false })?.mtimeMs ?? 0));
  return Date.now() - newest < graceMs;
}

function removeBlob(cacheDir: string, blob: string): void {
  for (const f of filesOf(blob)) fs.rmSync(path.join(cacheDir, f), { force: true });
}

/**
 * Brings `cacheDir` within `bounds`: unnamed blobs go (unless held or recent), then least recently
 * used entries (and their blobs, once no entry names them) that are neither held nor used elsewhere
 * within the grace, until both bounds are met. Resolves to the entries and bytes left.
 */
export async function evict(cacheDir: string, bounds: CacheBounds): Promise<{ entries: number; bytes: number }> {
  const maxEntries = bounds.maxCacheEntries ?? DEFAULT_MAX_ENTRIES;
  const maxBytes = bounds.maxCacheBytes ?? DEFAULT_MAX_BYTES;
  const grace = bounds.evictGraceMs ?? DEFAULT_EVICT_GRACE_MS;
  const { entries, blobs } = await listCache(cacheDir, grace);
  const refs = new Map<string, number>();
  for (const { entry } of entries) refs.set(entry.blob, (refs.get(entry.blob) ?? 0) + 1);
  const bytesOf = new Map<string, number>();
  let bytes = 0;
  /** blobs checked or entries removed since the start: a turn of the event loop every BATCH */
  let removed = 0;
  for (const b of blobs) {
    if (refs.has(b.name) || isHeld(cacheDir, b.name)) {
      bytes += b.bytes;
      bytesOf.set(b.name, b.bytes);
      continue;
    }
    // unnamed: checked again now (stat'ed), so a turn of the event loop every BATCH of them
    if (writtenRecently(cacheDir, b.name, grace)) bytes += b.bytes;
    else removeBlob(cacheDir, b.name);
    if (++removed % BATCH === 0) await yieldTurn();
  }
  let count = entries.length;
  entries.sort((a, b) => (a.entry.usedAt ?? a.entry.checkedAt) - (b.entry.usedAt ?? b.entry.checkedAt));
  for (const { index, entry } of entries) {
    if (count <= maxEntries && bytes <= maxBytes) break;
    // checked now, not at the listing: the loop has yielded since
    if (isHeld(cacheDir, entry.blob) || keptNow(index, entry, grace)) continue;
    fs.rmSync(index, { force: true });
    forgetWrite(index);
    count--;
    const left = refs.get(entry.blob)! - 1;
    refs.set(entry.blob, left);
    if (left === 0) {
      bytes -= bytesOf.get(entry.blob) ?? 0;
      removeBlob(cacheDir, entry.blob);
    }
    if (++removed % BATCH === 0) await yieldTurn();
  }
  return { entries: count, bytes };
}
