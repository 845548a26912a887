/**
 * espeak-ng, the embedded default TTS: text or SSML (`-m`), BCP-47 language → espeak voice, and
 * 'male'/'female' → espeak variants. Output 22.05 kHz is converted to 8 kHz by sox (kept at 22.05 kHz
 * for a wideband prompt).
 */
import { execFile, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { readWavInfo } from '../audio/wav';
import { TtsError, type TtsOptions, type TtsProvider, type TtsResult } from './provider';
import { pipeThroughSox } from './run';
import { espeakPool } from './espeak-pool';

export interface EspeakOptions {
  /** Where synthesized files go (the TTS cache normally decides instead). */
  outDir: string;
  /** Words per minute. Default 165. */
  speed?: number;
  /** Variant appended to every voice that has none, e.g. 'f3'. */
  variant?: string;
  timeoutMs?: number;
  /** Provider name (for registry variants sharing this class). Default 'espeak-ng'. */
  name?: string;
}

let languages: Set<string> | null = null;

const parseVoices = (out: string): Set<string> =>
  new Set(
    out
      .split('\n')
      .slice(1)
      .map((l) => l.trim().split(/\s+/)[1])
      .filter((x): x is string => !!x)
      .map((x) => x.toLowerCase()),
  );

/** Language codes espeak-ng knows (from `espeak-ng --voices`), read once. */
export function espeakLanguages(): Set<string> {
  languages ??= parseVoices(execFileSync('espeak-ng', ['--voices'], { encoding: 'utf8' }));
  return languages;
}

/** Reads espeak-ng's languages without blocking (a media worker at start, before its first say would block on it). */
export function loadEspeakLanguages(): Promise<void> {
  if (languages) return Promise.resolve();
  return new Promise((resolve, reject) =>
    execFile('espeak-ng', ['--voices'], { encoding: 'utf8' }, (err, out) => {
      if (err) return reject(new TtsError('SYNTHESIS_FAILED', `cannot run espeak-ng: ${err.message}`));
      languages ??= parseVoices(out);
      resolve();
    }),
  );
}

const ALIASES: Record<string, string> = {
  en: 'en-us',
  'en-au': 'en-us',
  'en-ca': 'en-us',
  'en-in': 'en-gb',
  zh: 'cmn',
  'zh-cn': 'cmn',
  'fr-ca': 'fr-fr',
  pt: 'pt-pt',
  'es-mx': 'es-419',
  'es-us': 'es-419',
};

/** BCP-47 tag → espeak-ng voice ('en-US' → 'en-us', 'de-DE' → 'de', 'fr-CA' → 'fr-fr'). */
export function espeakVoiceFor(language = 'en-US'): string {
  const tag = language.toLowerCase().replace('_', '-');
  const known = espeakLanguages();
  for (const cand of [ALIASES[tag], tag, ALIASES[tag.split('-')[0]], tag.split('-')[0]]) {
    if (cand && known.has(cand)) return cand;
  }
  throw new TtsError('UNSUPPORTED_LANGUAGE', `espeak-ng has no voice for language "${language}"`);
}

const GENDER: Record<string, string> = { female: 'f3', male: 'm3' };

export class EspeakProvider implements TtsProvider {
  readonly name: string;

  constructor(private readonly opts: EspeakOptions) {
    this.name = opts.name ?? 'espeak-ng';
  }

  /** The espeak `-v` argument for these options. */
  voiceArg(o: TtsOptions = {}): string {
    const v = o.voice?.trim();
    if (v && !GENDER[v.toLowerCase()] && !/^[a-z0-9]{1,3}$/i.test(v)) {
      if (!/^[a-z0-9+_-]+$/i.test(v)) throw new TtsError('SYNTHESIS_FAILED', `bad espeak voice name "${v}"`);
      return v; // a full espeak voice such as 'en-gb+m7'
    }
    const base = espeakVoiceFor(o.language);
    const variant = v ? (GENDER[v.toLowerCase()] ?? v) : this.opts.variant;
    return variant ? `${base}+${variant}` : base;
  }

  /**
   * The 8 kHz speech of `text` as espeak-ng makes it, on a warm process of the pool (espeak-pool.ts):
   * `onAudio` gets it in 20 ms multiples; resolves with the sample count. `signal` stops it.
   */
  stream(text: string, o: TtsOptions, onAudio: (samples: Int16Array) => void, signal?: AbortSignal): Promise<number> {
    if (!text.trim()) return Promise.reject(new TtsError('EMPTY_TEXT', 'nothing to say'));
    return espeakPool.speak(text, this.streamOptions(o), onAudio, signal);
  }

  /** Starts a warm process for requests like `o` ahead of the first one (espeak-pool.ts). */
  prewarm(o: TtsOptions): void {
    espeakPool.prewarm(this.streamOptions(o));
  }

  /** The pool's options for a request (a wrong voice or language throws here, before any process). */
  streamOptions(o: TtsOptions = {}): { voice: string; speed: number; ssml: boolean; timeoutMs: number } {
    return { voice: this.voiceArg(o), speed: this.opts.speed ?? 165, ssml: !!o.ssml, timeoutMs: this.opts.timeoutMs ?? 20000 };
  }

  async synthesize(text: string, o: TtsOptions = {}, outPath?: string): Promise<TtsResult> {
    if (!text.trim()) throw new TtsError('EMPTY_TEXT', 'nothing to say');
    const voice = this.voiceArg(o);
    const out = outPath ?? path.join(this.opts.outDir, `espeak-${crypto.randomUUID()}.wav`);
    fs.mkdirSync(path.dirname(out), { recursive: true });
    const args = ['-v', voice, '-s', String(this.opts.speed ?? 165), '--stdout', '--stdin'];
    if (o.ssml) args.push('-m');
    await pipeThroughSox('espeak-ng', args, text, out, this.opts.timeoutMs ?? 20000, !!o.wideband);
    return { path: out, durationMs: readWavInfo(out).durationMs };
  }
}
