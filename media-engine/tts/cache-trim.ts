/**
 * The TTS cache's bound (cache.ts writes it): `tts-<sha256>.wav`, one file per prompt, its mtime the
 * last time it was served (cache.ts touches a file on each hit). A trim keeps the most recently used
 * within TtsCacheBounds, off the callers' 20 ms ticks (core/files/dir-trims.ts decides when; the
 * directory is listed and stat'ed with fs.promises a few files at a time). Each file is stat'ed again
 * just before it is removed, and one served or written less than evictGraceMs ago stays: the cache
 * hands out paths, and the player (a media worker, or the switch of the fsmrf backend) opens one
 * shortly after; once open, removing it does not stop the playback. A synthesis's temporary file
 * (`<name>.<pid>.<hex>.tmp`) is removed once its process is gone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DirTrims, inBatches, statOf, TRIM_BATCH, yieldTurn, type TrimLeft } from '../../core/files/dir-trims';
import { processRunning } from '../../core/files/process-running';

export interface TtsCacheBounds {
  /** Most prompts kept. Default 10000. */
  maxEntries?: number;
  /** Most bytes kept. Default 1 GiB (about 18 hours of 8 kHz speech). */
  maxBytes?: number;
  /** A prompt served or written less than this long ago is never removed, ms. Default 120000. */
  evictGraceMs?: number;
}

export const TTS_CACHE_DEFAULTS = { maxEntries: 10_000, maxBytes: 1024 * 1024 * 1024, evictGraceMs: 120_000 } as const;

/** This thread's bounds for a cache given none of its own (configureTtsCache); TTS_CACHE_DEFAULTS under them. */
let configured: TtsCacheBounds = {};

/**
 * The bounds of every TTS cache of this thread that is given none of its own (media-app: from
 * TTS_CACHE_MAX_MB / TTS_CACHE_MAX_ENTRIES, in its main thread and each media worker).
 */
export function configureTtsCache(bounds: TtsCacheBounds): void {
  configured = { ...bounds };
}

/** The bounds a cache given `own` works to: its own, else this thread's configured ones. */
export function ttsCacheBounds(own?: TtsCacheBounds): TtsCacheBounds {
  return own ?? configured;
}
/** A trim of a directory starts at most this often, ms, unless this thread's writes may have passed the bounds. */
export const TTS_TRIM_EVERY_MS = 60_000;

export const PROMPT_NAME = /^tts-[0-9a-f]{64}\.wav$/;
const TEMP_NAME = /^tts-[0-9a-f]{64}\.wav\.(\d+)\.[0-9a-f]+\.tmp$/;

interface Prompt {
  file: string;
  bytes: number;
  usedAt: number;
}

/** The directory's prompts (size, last use); temporary files of processes that are gone removed. */
async function listPrompts(dir: string): Promise<Prompt[]> {
  const names = await fs.promises.readdir(dir);
  const left = names.filter((n) => {
    const m = TEMP_NAME.exec(n);
    return m !== null && !processRunning(Number(m[1]));
  });
  await inBatches(left, (n) => fs.promises.rm(path.join(dir, n), { force: true }));
  const listed = await inBatches(
    names.filter((n) => PROMPT_NAME.test(n)),
    async (n): Promise<Prompt | null> => {
      const st = await statOf(path.join(dir, n));
      return st ? { file: path.join(dir, n), bytes: st.size, usedAt: st.mtimeMs } : null;
    },
  );
  return listed.filter((p): p is Prompt => p !== null);
}

/**
 * Brings `dir` within `bounds`: the least recently used prompts go, each stat'ed again just before
 * (one served since the listing, or within the grace, stays), until both bounds are met. Resolves to
 * the prompts and bytes left.
 */
export async function evictTts(dir: string, bounds: TtsCacheBounds = {}): Promise<TrimLeft> {
  const maxEntries = bounds.maxEntries ?? TTS_CACHE_DEFAULTS.maxEntries;
  const maxBytes = bounds.maxBytes ?? TTS_CACHE_DEFAULTS.maxBytes;
  const grace = bounds.evictGraceMs ?? TTS_CACHE_DEFAULTS.evictGraceMs;
  const prompts = await listPrompts(dir);
  let entries = prompts.length;
  let bytes = prompts.reduce((n, p) => n + p.bytes, 0);
  prompts.sort((a, b) => a.usedAt - b.usedAt);
  let checked = 0;
  for (const p of prompts) {
    if (entries <= maxEntries && bytes <= maxBytes) break;
    if (++checked % TRIM_BATCH === 0) await yieldTurn();
    // checked now, not at the listing: the loop has yielded since
    const now = fs.statSync(p.file, { throwIfNoEntry: false });
    if (!now) {
      entries--;
      bytes -= p.bytes;
      continue;
    }
    if (now.mtimeMs !== p.usedAt) continue; // served since the listing
    // within the grace: so is every later one (listed newer)
    if (Date.now() - now.mtimeMs < grace) break;
    fs.rmSync(p.file, { force: true });
    entries--;
    bytes -= p.bytes;
  }
  return { entries, bytes };
}

const trims = new DirTrims<TtsCacheBounds>(
  (dir, b) => evictTts(dir, b),
  (b) => ({ maxEntries: b.maxEntries ?? TTS_CACHE_DEFAULTS.maxEntries, maxBytes: b.maxBytes ?? TTS_CACHE_DEFAULTS.maxBytes }),
  TTS_TRIM_EVERY_MS,
);

/** A prompt of `bytes` was written to `dir`: a trim in the background when one may be needed. */
export function notePromptWritten(dir: string, bounds: TtsCacheBounds, bytes: number): void {
  trims.noteWrite(dir, bounds, bytes);
}

/** Resolves once no trim of `dir` runs in this thread (nor one asked meanwhile). */
export function ttsCacheTrimmed(dir: string): Promise<void> {
  return trims.settled(dir);
}

/** How many trims of `dir` this thread started. */
export function ttsTrimsStarted(dir: string): number {
  return trims.started(dir);
}
