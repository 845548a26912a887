/**
 * The platform's prompts as files the switch plays (a leg's play: endpoint.ts; a room's announcement
 * <Play> and <Say>: conference-say.ts; README.md beside, "Conferences"): media-app
 * fetches each URL through its own egress policy (media-engine's prepareAudio, as the embedded engine
 * fetches a play URL: the host resolved and checked, the socket pinned to the checked address, each
 * redirect checked again, the same limits) and converts it to an 8 kHz 16-bit mono WAV; a text is
 * synthesised by the platform's voices as the embedded engine's say does (media-engine's TTS providers,
 * createTtsProvider). Both are cached as the engine caches them, in media-app's own cache (`cacheDir`,
 * 0700 and ours, default $DATA_DIR/prompt-cache; the engine's layout: `<cacheDir>/audio`, `<cacheDir>/tts`;
 * the fetched prompts bounded, least recently used first, and a `no-store` one kept for its copy only;
 * a copy served from the cache is asked of the egress policy as a fetch is): a URL checked less than
 * `maxAgeMs` ago (or what its Cache-Control allows, if less) is used again with no request, after that
 * revalidated (If-None-Match / If-Modified-Since: a 304 costs no body; media-engine/sources/fetch-cache.ts);
 * a text, voice and language is synthesised once. What the switch gets is a copy in a directory of its
 * own under `dir`, the directory shared with the switch (MEDIA_SERVER_PROMPTS_DIR), never the URL: it
 * fetches nothing on a customer's behalf. Those who hold one prompt at the same time (an announcement's
 * members) share one copy; the last to release it removes its directory, file and all.
 *
 * The switch runs as a user of its own (FreeSWITCH's packages: `freeswitch`), so what is written here is
 * readable by others whatever media-app's umask: each prompt's directory 0755, its file 0644 (mkdtemp
 * makes 0700, the umask narrows the rest). Who else may read them is the shared directory's to say: the
 * operator's mode and group on MEDIA_SERVER_PROMPTS_DIR (freeswitch/README.md, "Shared files"); made
 * here when missing, it is 0755 too. A prompt's directory is named `p-<host>-<pid>-…` (folderPrefix):
 * after a crash, the next start removes those its host's dead processes left (sweepStale).
 *
 * A prompt's path goes into the switch's commands as one argument (`conference <room> play <path> …`),
 * which FreeSWITCH splits at spaces, reads `'` as a quote and `\` as an escape (switch_separate_string),
 * and fsmrf joins a leg's files with `!`: a shared directory with white space or one of `'"\!` in its
 * path is refused when SharedPrompts is made (media-app's start), a node file's name is cleaned.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTtsProvider, playUrlFailure, prepareAudio, readWav, type CacheBounds, type PreparedAudio, type PrepareOptions, type TtsProvider } from '../../../media-engine';
import { privateDir } from '../../../core/files/private-dir';
import { processRunning } from '../../../core/files/process-running';
import { eslArg } from './esl-arg';

/** The embedded engine's default voice (source-resolver.ts ttsProvider): a say that names no provider. */
const DEFAULT_TTS = 'espeak-ng';

/** A text that is SSML, as the engine's say tells it (source-resolver.ts). */
const SSML = /^\s*<speak[\s>]/i;

/** What the switch's argument parsing or fsmrf's file list would split or unquote in a path. */
const UNSAFE_IN_PATH = /[\s'"\\!]/;

/** What SharedPrompts takes beyond its directory and egress policy. */
export interface SharedPromptsOptions extends CacheBounds {
  /**
   * media-app's cache of fetched and synthesised prompts, its alone (MEDIA_SERVER_PROMPT_CACHE_DIR,
   * default $DATA_DIR/prompt-cache): made 0700 when missing; refused at start when another user owns
   * it or group or others may write to it (core/files/private-dir.ts). Bounded as CacheBounds say
   * (the fetched prompts, least recently used first: media-engine/sources/cache-index.ts).
   */
  cacheDir: string;
  /** a fetched URL used again with no request for this long, then revalidated (default the engine's, 300000) */
  maxAgeMs?: number;
}

/** A text's voice, as a say names it (the engine's say: provider, voice, language). */
export interface SpeechRequest {
  language?: string;
  voice?: string;
  provider?: string;
}

/** A prompt held for playing: its WAV on the shared directory, until released. */
export interface HeldPrompt {
  /** the WAV's absolute path (what the switch is given) */
  path: string;
  durationMs: number;
  /** Played (or given up): the last holder removes the file. Idempotent. */
  release(): void;
}

interface Fetched {
  path: string;
  durationMs: number;
  remove(): void;
}

interface Holding {
  got: Promise<Fetched>;
  users: number;
}

export class SharedPrompts {
  readonly dir: string;
  readonly cacheDir: string;
  private readonly maxAgeMs: number | undefined;
  private readonly bounds: CacheBounds;
  private readonly held = new Map<string, Holding>();
  private readonly voices = new Map<string, TtsProvider>();
  /** `p-<host>-<pid>-`: the directories this process makes (sweepStale tells a dead process's by it) */
  private readonly prefix = folderPrefix(os.hostname(), process.pid);

  /**
   * `dir`: shared with the switch (the switch reads what media-app writes there, at the same path);
   * `egress`: media-app's policy. Throws when `dir`'s absolute path cannot go into a switch command,
   * or when `o.cacheDir` is not media-app's alone.
   */
  constructor(
    dir: string,
    private readonly egress: PrepareOptions['egress'],
    o: SharedPromptsOptions,
  ) {
    this.dir = path.resolve(dir);
    const bad = UNSAFE_IN_PATH.exec(this.dir);
    if (bad)
      throw new Error(
        `MEDIA_SERVER_PROMPTS_DIR: ${JSON.stringify(this.dir)} has ${JSON.stringify(bad[0])} in it, which the switch's command parsing would split or unquote (a space, a quote, a backslash or !): choose a directory without one`,
      );
    eslArg('MEDIA_SERVER_PROMPTS_DIR', this.dir);
    this.cacheDir = privateDir(o.cacheDir, 'MEDIA_SERVER_PROMPT_CACHE_DIR');
    this.maxAgeMs = o.maxAgeMs;
    this.bounds = { maxCacheBytes: o.maxCacheBytes, maxCacheEntries: o.maxCacheEntries };
  }

  /** The prompt at `url` (http or https only), fetched once for all who hold it meanwhile; rejects with the fetch's or conversion's error. */
  hold(url: string): Promise<HeldPrompt> {
    return this.holding(url, () => this.fetch(url));
  }

  /**
   * A file of the node's own (its music on hold, moh-source.ts) copied into the shared directory, where
   * the switch's room may read it (a room plays only from there), held and released as a URL's.
   */
  holdNodeFile(file: string): Promise<HeldPrompt> {
    return this.holding(`file:${path.resolve(file)}`, () => this.copy(file));
  }

  /**
   * `text` spoken by the platform's voice `provider` (default the engine's, espeak-ng) in its voice or
   * language, synthesised as the embedded engine's say does (createTtsProvider, cached in
   * `<cacheDir>/tts`), held and released as a URL's; rejects with the TTS error (an unknown provider,
   * an empty text, a failed synthesis).
   */
  holdSpeech(text: string, o: SpeechRequest = {}): Promise<HeldPrompt> {
    const provider = o.provider || DEFAULT_TTS;
    const key = `say:${JSON.stringify([provider, o.voice ?? '', o.language ?? '', text])}`;
    return this.holding(key, async () => {
      const r = await this.voice(provider).synthesize(text, { language: o.language, voice: o.voice, ssml: SSML.test(text) });
      return this.place(r.path, 'speech.wav');
    });
  }

  /** The cached TTS provider `name` (throws the engine's UNKNOWN_PROVIDER for a name it has not). */
  private voice(name: string): TtsProvider {
    let p = this.voices.get(name);
    if (!p) this.voices.set(name, (p = createTtsProvider(name, { cacheDir: path.join(this.cacheDir, 'tts') })));
    return p;
  }

  private async holding(key: string, load: () => Promise<Fetched>): Promise<HeldPrompt> {
    let h = this.held.get(key);
    if (!h) {
      h = { got: load(), users: 0 };
      this.held.set(key, h);
    }
    h.users++;
    const entry = h;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      if (--entry.users > 0) return;
      if (this.held.get(key) === entry) this.held.delete(key);
      entry.got.then(
        (f) => f.remove(),
        () => undefined,
      );
    };
    try {
      const f = await entry.got;
      return { path: f.path, durationMs: f.durationMs, release };
    } catch (err) {
      release();
      throw err;
    }
  }

  /**
   * Removes the prompt directories a crashed process of this host left: named with this host's name and
   * the pid of a process no longer running (or this one's: a pid used again), and last changed before
   * `startedAt` (this process's start). Another host's, a live process's and anything not ours are
   * left. Resolves with the names removed.
   */
  async sweepStale(startedAt = Date.now() - process.uptime() * 1000): Promise<string[]> {
    const host = hostPrefix(os.hostname());
    let names: string[];
    try {
      names = await fs.promises.readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const removed: string[] = [];
    for (const name of names) {
      const pid = name.startsWith(host) ? /^(\d+)-[^-/]+$/.exec(name.slice(host.length)) : null;
      if (!pid || (Number(pid[1]) !== process.pid && processRunning(Number(pid[1])))) continue;
      const st = await fs.promises.lstat(path.join(this.dir, name)).catch(() => null);
      if (!st?.isDirectory() || st.mtimeMs >= startedAt) continue;
      await fs.promises.rm(path.join(this.dir, name), { recursive: true, force: true });
      removed.push(name);
    }
    return removed;
  }

  /** A directory of one prompt's own under `dir` (made, 0755, when missing), 0755 whatever the umask. */
  private async ownDir(): Promise<string> {
    if (await fs.promises.mkdir(this.dir, { recursive: true })) await fs.promises.chmod(this.dir, 0o755);
    const own = await fs.promises.mkdtemp(path.join(this.dir, this.prefix));
    await fs.promises.chmod(own, 0o755);
    return own;
  }

  /** A file of the node's own, copied under a name the switch's commands take whole (white space and quotes as `_`). */
  private copy(file: string): Promise<Fetched> {
    return this.place(file, path.basename(file).replace(/[^A-Za-z0-9._-]/g, '_'));
  }

  /** `file` copied as `name` into a directory of its own under `dir`, 0644. */
  private async place(file: string, name: string): Promise<Fetched> {
    const own = await this.ownDir();
    const remove = () => fs.rmSync(own, { recursive: true, force: true });
    try {
      const to = path.join(own, name);
      await fs.promises.copyFile(file, to);
      await fs.promises.chmod(to, 0o644);
      return { path: to, durationMs: readWav(to).info.durationMs, remove };
    } catch (err) {
      remove();
      throw err;
    }
  }

  private async fetch(url: string): Promise<Fetched> {
    // a local path would have the switch play one of its own files: only the platform's URLs are fetched
    if (!/^https?:\/\//i.test(url)) throw new Error(`a prompt for the switch must be an http(s) URL (got ${JSON.stringify(url.slice(0, 80))})`);
    let got: PreparedAudio;
    try {
      got = await prepareAudio(url, { cacheDir: path.join(this.cacheDir, 'audio'), egress: this.egress, maxAgeMs: this.maxAgeMs, ...this.bounds });
    } catch (err) {
      // as the engine's play tells it: the policy's refusal, or one generic reason (never the remote answer)
      throw playUrlFailure(err, url);
    }
    // held (not evicted; a no-store body's files kept) until copied for the switch
    try {
      return await this.place(got.path, 'prompt.wav');
    } finally {
      got.release();
    }
  }
}

/** `p-<host>-`: the host's part of a prompt directory's name (kept to `A-Za-z0-9._`: a `-` would split it). */
function hostPrefix(host: string): string {
  return `p-${host.replace(/[^A-Za-z0-9._]/g, '_').slice(0, 64)}-`;
}

/** `p-<host>-<pid>-`: a prompt directory's prefix, mkdtemp's six characters after it. */
export function folderPrefix(host: string, pid: number): string {
  return `${hostPrefix(host)}${pid}-`;
}
