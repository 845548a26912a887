/**
 * A disk cache in front of any provider, keyed by (provider, text, voice, language, ssml, and for a
 * wideband prompt that it is one: the 8 kHz and the wideband file are two entries): the same
 * prompt is synthesized once. Files are written under a temp name and renamed, so a reader never
 * sees a half-written prompt; concurrent requests for one key share one synthesis. The directory is
 * bounded (cache-trim.ts): a hit touches its file (its mtime is its last use), a new file asks for a
 * trim, and the least recently used go.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { readWavInfo, wavHeader } from '../audio/wav';
import type { TtsOptions, TtsProvider, TtsResult } from './provider';
import { notePromptWritten, type TtsCacheBounds } from './cache-trim';

/** A provider that can write to a given path (all built-in ones can). */
export interface PathTtsProvider extends TtsProvider {
  synthesize(text: string, opts?: TtsOptions, outPath?: string): Promise<TtsResult>;
  /** 8 kHz speech as it is made (espeak-ng); resolves with the sample count. */
  stream?(text: string, opts: TtsOptions, onAudio: (samples: Int16Array) => void, signal?: AbortSignal): Promise<number>;
  /** readies what the first request like `opts` needs (a warm espeak-ng process) */
  prewarm?(opts: TtsOptions): void;
}

/** Most speech a streamed synthesis keeps for the cache (10 min at 8 kHz); a longer text is not cached. */
const MAX_CACHED_SAMPLES = 10 * 60 * 8000;

export class CachedTtsProvider implements TtsProvider {
  readonly name: string;
  private readonly inflight = new Map<string, Promise<TtsResult>>();

  constructor(
    private readonly inner: PathTtsProvider,
    private readonly cacheDir: string,
    private readonly bounds: TtsCacheBounds = {},
  ) {
    this.name = inner.name;
    fs.mkdirSync(cacheDir, { recursive: true });
  }

  /** The cache file a request maps to. */
  pathFor(text: string, o: TtsOptions = {}): string {
    const key = crypto
      .createHash('sha256')
      .update(JSON.stringify([this.inner.name, text, o.voice ?? '', (o.language ?? 'en-US').toLowerCase(), !!o.ssml, ...(o.wideband ? ['wide'] : [])]))
      .digest('hex');
    return path.join(this.cacheDir, `tts-${key}.wav`);
  }

  /** True when a request can stream (the provider streams, at 8 kHz: not a wideband prompt). */
  streams(o: TtsOptions = {}): boolean {
    return !o.wideband && typeof this.inner.stream === 'function';
  }

  /** Readies the provider for requests like `o` (espeak-ng: a warm process), where it can. */
  prewarm(o: TtsOptions = {}): void {
    this.inner.prewarm?.(o);
  }

  /** The cached prompt of a request, if there is one (touched: its last use is now). */
  cached(text: string, o: TtsOptions = {}): TtsResult | null {
    return this.hit(this.pathFor(text, o));
  }

  /**
   * `file` served from the cache: its mtime set to now (a trim removes only what was not used within
   * its grace), or null when it is not there (never written, or trimmed).
   */
  private hit(file: string): TtsResult | null {
    try {
      const now = new Date();
      fs.utimesSync(file, now, now);
      return { path: file, durationMs: readWavInfo(file).durationMs, cached: true };
    } catch (err) {
      // absent, or removed by another thread's trim between the two: made again. Anything else (a
      // cache directory this process may not write) is not a miss to hide behind a new synthesis.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  /**
   * Streams a request's speech as the provider makes it (see streams()); once the whole text is
   * done it is written to the cache as synthesize() would have (a stopped or failed one is not).
   */
  async stream(text: string, o: TtsOptions, onAudio: (samples: Int16Array) => void, signal?: AbortSignal): Promise<number> {
    if (!this.streams(o)) throw new Error(`${this.name} does not stream this request`);
    const parts: Int16Array[] = [];
    let kept = 0;
    const total = await this.inner.stream!(
      text,
      o,
      (samples) => {
        if (kept + samples.length <= MAX_CACHED_SAMPLES) parts.push(samples);
        kept += samples.length;
        onAudio(samples);
      },
      signal,
    );
    if (kept === total && total > 0 && kept <= MAX_CACHED_SAMPLES) {
      const all = new Int16Array(total);
      let off = 0;
      for (const p of parts) {
        all.set(p, off);
        off += p.length;
      }
      const file = this.pathFor(text, o);
      const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
      // written without blocking: this runs on a media worker, beside other legs' 20 ms ticks
      const body = Buffer.from(all.buffer, all.byteOffset, all.byteLength);
      try {
        const wav = Buffer.concat([wavHeader(body.length, 8000), body]);
        await fs.promises.writeFile(tmp, wav);
        await fs.promises.rename(tmp, file);
        notePromptWritten(this.cacheDir, this.bounds, wav.length);
      } finally {
        await fs.promises.rm(tmp, { force: true });
      }
    }
    return total;
  }

  async synthesize(text: string, o: TtsOptions = {}): Promise<TtsResult> {
    const file = this.pathFor(text, o);
    const cached = this.hit(file);
    if (cached) return cached;
    let p = this.inflight.get(file);
    if (!p) {
      p = (async () => {
        const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
        try {
          const r = await this.inner.synthesize(text, o, tmp);
          const bytes = fs.statSync(tmp).size;
          fs.renameSync(tmp, file);
          notePromptWritten(this.cacheDir, this.bounds, bytes);
          return { path: file, durationMs: r.durationMs, cached: false };
        } finally {
          fs.rmSync(tmp, { force: true });
        }
      })().finally(() => this.inflight.delete(file));
      this.inflight.set(file, p);
    }
    return p;
  }
}
