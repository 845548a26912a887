/**
 * prepareAudio: any playable thing (a local file in a common format, or an http(s) URL) → a local
 * 8 kHz 16-bit mono WAV the engine can stream frame by frame; with `wideband` (for a G.722 or Opus
 * leg) a 16-bit mono WAV at the source's own rate when that is above 8 kHz, which the wide reader
 * converts to 16 kHz once (speexdsp), never through 8 kHz. Conversions are cached by content
 * (URLs) or by path+size+mtime (local files), so the second play of a prompt costs a stat.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isEngineFormat, readWavInfo } from '../audio/wav';
import { AudioSourceError } from './errors';
import { fetchToCache, type FetchOptions } from './fetch-cache';
import { convertToEngineWav } from './sox';
import { isWideFormat } from './wide-reader';

export interface PrepareOptions extends FetchOptions {
  /** Time limit for the sox conversion, ms. Default 30000. */
  convertTimeoutMs?: number;
  /**
   * For a wideband leg: keep the source's own rate (a 16-bit mono WAV at it, as it is or converted by
   * sox without resampling) unless that is 8 kHz. Cached apart from the 8 kHz conversion.
   */
  wideband?: boolean;
}

export interface PreparedAudio {
  /** 16-bit mono PCM WAV, ready for `openPreparedReader`: 8 kHz, or with `wideband` the source's rate. */
  path: string;
  /** the WAV's rate */
  rate: number;
  durationMs: number;
  /** true when sox converted it (false: the source was already in engine format). */
  converted: boolean;
  /** For URLs: where the bytes came from this time. */
  from?: 'network' | 'revalidated' | 'cache';
  /**
   * The use is over (idempotent): a URL's cached copy may be evicted again (fetch-cache.ts), a
   * `no-store` one's files (the body, its conversion) are removed. A reader opened on `path` before
   * keeps reading it (an open file).
   */
  release(): void;
}

/** One preparation and how many callers share it (each releases once; the last releases it). */
interface Job {
  got: Promise<PreparedAudio>;
  users: number;
}

const inflight = new Map<string, Job>();

export function isUrl(s: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(s);
}

/** Prepare a file or URL for playback (concurrent calls for the same source share one job). */
export async function prepareAudio(source: string, opts: PrepareOptions): Promise<PreparedAudio> {
  const key = `${opts.cacheDir}\n${opts.wideband ? 'w' : 'n'}\n${source}`;
  let job = inflight.get(key);
  if (!job) {
    const got = prepare(source, opts);
    const made: Job = (job = { got, users: 0 });
    const forget = () => void (inflight.get(key) === made && inflight.delete(key));
    got.then(forget, forget);
    inflight.set(key, job);
  }
  const mine = job;
  mine.users++;
  let r: PreparedAudio;
  try {
    r = await mine.got;
  } catch (err) {
    mine.users--;
    throw err;
  }
  let done = false;
  const release = () => {
    if (done) return;
    done = true;
    if (--mine.users === 0) r.release();
  };
  return { ...r, release };
}

async function prepare(source: string, opts: PrepareOptions): Promise<PreparedAudio> {
  if (isUrl(source)) {
    const got = await fetchToCache(source, opts);
    // a no-store body's conversion is of this use only too
    const conv = got.transient ? `${path.basename(got.path)}.${opts.wideband ? 'convw' : 'conv'}.wav` : `${opts.wideband ? 'convw' : 'conv'}-${got.sha256}.wav`;
    let res: Omit<PreparedAudio, 'release'>;
    try {
      res = await ensureEngineWav(got.path, conv, opts, source);
    } catch (err) {
      got.release();
      throw err;
    }
    const release = () => {
      got.release();
      if (got.transient && res.converted) fs.rmSync(res.path, { force: true });
    };
    return { ...res, from: got.from, release };
  }
  let st: fs.Stats;
  try {
    st = fs.statSync(source);
  } catch {
    throw new AudioSourceError('NOT_FOUND', `audio file not found: ${source}`, source);
  }
  if (!st.isFile()) throw new AudioSourceError('NOT_FOUND', `not a file: ${source}`, source);
  if (st.size === 0) throw new AudioSourceError('UNSUPPORTED_FORMAT', `empty file: ${source}`, source);
  const id = crypto
    .createHash('sha256')
    .update(`${path.resolve(source)}\n${st.size}\n${st.mtimeMs}`)
    .digest('hex');
  const res = await ensureEngineWav(source, `${opts.wideband ? 'convw' : 'conv'}-local-${id}.wav`, opts, source);
  return { ...res, release: () => undefined };
}

async function ensureEngineWav(file: string, convName: string, opts: PrepareOptions, source: string): Promise<Omit<PreparedAudio, 'release'>> {
  try {
    const info = readWavInfo(file);
    if (isEngineFormat(info.format) || (opts.wideband && isWideFormat(info.format))) return { path: file, rate: info.format.sampleRate, durationMs: info.durationMs, converted: false };
  } catch {
    // not a WAV we read natively: sox decides
  }
  fs.mkdirSync(opts.cacheDir, { recursive: true, mode: 0o700 });
  const out = path.join(opts.cacheDir, convName);
  if (!fs.existsSync(out)) await convertToEngineWav(file, out, { timeoutMs: opts.convertTimeoutMs, keepRate: opts.wideband });
  let info;
  try {
    info = readWavInfo(out);
  } catch (err) {
    fs.rmSync(out, { force: true });
    throw new AudioSourceError('CONVERSION_FAILED', `sox output unreadable for ${source}: ${(err as Error).message}`, source);
  }
  return { path: out, rate: info.format.sampleRate, durationMs: info.durationMs, converted: true };
}
