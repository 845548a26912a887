/**
 * Turns a play request (file path, http(s) URL, silence/tone stream, text to say) into a FrameSource
 * of 8 kHz 16-bit mono frames, through the sources/ and tts/ modules (sox conversion, URL fetch,
 * speech synthesis, each cached on disk). For a wideband leg (`wideband`), files and speech above
 * 8 kHz become wideband sources instead (16 kHz frames converted once from the file's own rate);
 * tones and silence stay 8 kHz.
 */
import os from 'node:os';
import { EgressPolicy, type EgressSettings } from '../../core/net';
import { privateDir } from '../../core/files/private-dir';
import path from 'node:path';
import { type FrameSource } from '../dsp/frame';
import { parseTeletone } from '../dsp/teletone';
import { beep, dtmfTones, ringback, silence, ToneSource } from '../dsp/tones';
import { AudioSourceError, isUrl, openPreparedReader, playUrlFailure, prepareAudio, type CacheBounds } from '../sources';
import { configureTtsCache, createTtsProvider, type CachedTtsProvider, type TtsCacheBounds, type TtsOptions } from '../tts';
import { StreamedSpeech } from '../tts/streamed-speech';
import { loadEspeakLanguages } from '../tts/espeak';
import type { SynthesisReport } from '../player';

/** A file or stream name; text to say; or a file started `seekSamples` (8 kHz samples) in (FreeSWITCH's `file@@N`). */
export type SourceSpec = string | { say: string; language?: string; voice?: string; provider?: string } | { file: string; seekSamples: number };

/** MediaServerOptions.cacheDir (media-app's: $DATA_DIR/engine-cache, 0700 and its own); unset: defaultCacheDir(), at first use. */
let cacheDir: string | undefined;
let ttsProvider = 'espeak-ng';
/** Who play URLs may be fetched from: the node's settings (MediaServerOptions.egress); without them fetchToCache's default (public only). */
let egress: EgressPolicy | undefined;
/** The bound of the fetched play URLs and their conversions (MediaServerOptions.promptCache); without it the fetch cache's defaults. */
let promptCache: CacheBounds = {};
const tts = new Map<string, CachedTtsProvider>();

/** Where converted prompts, fetched URLs and synthesized speech are cached; the default TTS provider; the egress policy's settings; the speech cache's and the fetched prompts' bounds. */
export function configureSources(o: { cacheDir?: string; ttsProvider?: string; egress?: EgressSettings; ttsCache?: TtsCacheBounds; promptCache?: CacheBounds }): void {
  if (o.cacheDir) cacheDir = o.cacheDir;
  if (o.ttsCache) configureTtsCache(o.ttsCache);
  if (o.promptCache) promptCache = o.promptCache;
  if (o.ttsProvider) ttsProvider = o.ttsProvider;
  if (o.egress) egress = new EgressPolicy(o.egress);
}

/**
 * The cache directory of the engine used as a library without one: `<tmp>/media-engine-cache-<uid>`,
 * made 0700; one a link, a file, another user's or writable by group or others is refused, by name (a
 * local user could otherwise plant audio in a shared /tmp directory made first). A per-user name with
 * that check (as tmux's /tmp/tmux-<uid>) rather than a fresh mkdtemp per worker thread and per run, which
 * would give up the cache the workers share and keep across restarts and leave a directory (up to the
 * cache's bound) in /tmp after each run; rather than refusing to play without a cacheDir, which every
 * library use relies on. A user who made that name first can only make the default fail (give cacheDir).
 */
export function defaultCacheDir(tmp = os.tmpdir()): string {
  const dir = path.join(tmp, `media-engine-cache-${process.getuid?.() ?? 'user'}`);
  return privateDir(dir, 'media-engine cache', 'give MediaServerOptions.cacheDir a directory of your own');
}

const cacheRoot = () => (cacheDir ??= defaultCacheDir());

/**
 * Readies the default voice before the first say (a worker at start): espeak-ng's language list read
 * without blocking the worker's ticks, and a warm espeak-ng process for the default provider in
 * en-US, so the first talk of a worker is as fast as the next.
 */
export async function prewarmSpeech(language = 'en-US'): Promise<void> {
  await loadEspeakLanguages();
  provider(ttsProvider).prewarm({ language });
}

function provider(name: string): CachedTtsProvider {
  let p = tts.get(name);
  if (!p) tts.set(name, (p = createTtsProvider(name, { cacheDir: path.join(cacheRoot(), 'tts') })));
  return p;
}

/** Resolves a play request to a frame source (a synthesis told to `synthesized`). Rejects with "File Not Found" for missing files. */
export async function resolveSource(spec: SourceSpec, wideband = false, synthesized?: (r: SynthesisReport) => void): Promise<FrameSource> {
  if (typeof spec === 'object' && spec && 'say' in spec && typeof spec.say === 'string') {
    const ssml = /^\s*<speak[\s>]/i.test(spec.say);
    const name = spec.provider ?? ttsProvider;
    const startedAt = Date.now();
    const p = provider(name);
    const o: TtsOptions = { language: spec.language, voice: spec.voice, ssml, wideband };
    const hit = p.streams(o) ? p.cached(spec.say, o) : null;
    if (p.streams(o) && !hit) return streamSpeech(p, name, spec.say, o, synthesized);
    const r = hit ?? (await p.synthesize(spec.say, o));
    const endedAt = Date.now();
    synthesized?.({ provider: name, cached: r.cached === true, startedAt, endedAt, firstAudioAt: endedAt });
    return openPreparedReader(r.path);
  }
  if (typeof spec === 'object' && spec && 'file' in spec) {
    if (typeof spec.file !== 'string' || !spec.file || !(spec.seekSamples >= 0)) throw new Error('invalid play source');
    return openFile(spec.file, wideband, spec.seekSamples / 8);
  }
  if (typeof spec !== 'string' || !spec) throw new Error('invalid play source');
  const silenceMatch = /^silence_stream:\/\/(\d+)/.exec(spec);
  if (silenceMatch) return silence(Number(silenceMatch[1]));
  const tone = /^tone_stream:\/\/(beep|ringback|dtmf:([0-9A-D*#]+))$/i.exec(spec);
  if (tone) {
    if (tone[1].toLowerCase() === 'beep') return beep();
    if (tone[1].toLowerCase() === 'ringback') return ringback();
    return dtmfTones(tone[2]);
  }
  if (/^tone_stream:\/\/%/i.test(spec)) return new ToneSource(parseTeletone(spec.slice('tone_stream://'.length)));
  return openFile(spec, wideband, 0);
}

/** A file or URL, converted and cached, read from `startMs` on. */
async function openFile(spec: string, wideband: boolean, startMs: number): Promise<FrameSource> {
  const source = spec.startsWith('file://') ? spec.slice(7) : spec;
  try {
    // conversion (sox) and URL fetches are cached on disk; the reader streams a second at a time
    const prepared = await prepareAudio(source, { ...promptCache, cacheDir: path.join(cacheRoot(), 'audio'), egress, wideband });
    try {
      return openPreparedReader(prepared.path, startMs > 0 ? { startMs } : undefined);
    } finally {
      // the reader holds the file open: the cache may evict it (a no-store body's file goes now)
      prepared.release();
    }
  } catch (e) {
    // the policy's refusal, or one generic reason (never the remote answer)
    if (e instanceof AudioSourceError && isUrl(source)) throw playUrlFailure(e, source);
    if (e instanceof AudioSourceError && e.code === 'NOT_FOUND') throw new Error(`File Not Found: ${source}`);
    throw e;
  }
}

/**
 * Speech the provider streams (espeak-ng at 8 kHz), played as it is made: ready with its first
 * frames, not its whole text (tts/streamed-speech.ts). Its report's endedAt is the synthesis's end,
 * or when the prompt was stopped (which stops it).
 */
async function streamSpeech(p: CachedTtsProvider, name: string, text: string, o: TtsOptions, synthesized?: (r: SynthesisReport) => void): Promise<FrameSource> {
  const startedAt = Date.now();
  const report: SynthesisReport = { provider: name, cached: false, startedAt, endedAt: startedAt };
  const src = new StreamedSpeech();
  src.signal.addEventListener('abort', () => (report.endedAt = Date.now()), { once: true });
  p.stream(text, o, (samples) => src.push(samples), src.signal).then(
    () => {
      report.endedAt = Date.now();
      src.end();
    },
    (e: Error) => {
      if (src.signal.aborted) return;
      report.endedAt = Date.now();
      // after its first audio the prompt ends where the audio did, and the report says why
      report.error = (e as { code?: string }).code ?? 'SYNTHESIS_FAILED';
      src.fail(e);
    },
  );
  await src.firstAudio;
  report.firstAudioAt = Date.now();
  synthesized?.(report);
  return src;
}
