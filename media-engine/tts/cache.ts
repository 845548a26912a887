/**
 * A disk cache in front of any provider, keyed by (provider, text, voice, language, ssml, and for a
 * wideband prompt that it is one: the 8 kHz and the wideband file are two entries): the same
 * prompt is synthesized once. Files are written under a temp name and renamed, so a reader never
 * sees a half-written prompt; concurrent requests for one key share one synthesis.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { readWavInfo } from '../audio/wav';
import type { TtsOptions, TtsProvider, TtsResult } from './provider';

/** A provider that can write to a given path (all built-in ones can). */
export interface PathTtsProvider extends TtsProvider {
  synthesize(text: string, opts?: TtsOptions, outPath?: string): Promise<TtsResult>;
}

export class CachedTtsProvider implements TtsProvider {
  readonly name: string;
  private readonly inflight = new Map<string, Promise<TtsResult>>();

  constructor(
    private readonly inner: PathTtsProvider,
    private readonly cacheDir: string,
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

  async synthesize(text: string, o: TtsOptions = {}): Promise<TtsResult> {
    const file = this.pathFor(text, o);
    if (fs.existsSync(file)) return { path: file, durationMs: readWavInfo(file).durationMs, cached: true };
    let p = this.inflight.get(file);
    if (!p) {
      p = (async () => {
        const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
        try {
          const r = await this.inner.synthesize(text, o, tmp);
          fs.renameSync(tmp, file);
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
