/**
 * One speaking session on this node: texts arrive numbered (say #1, #2, ...) and are spoken in that
 * order, whatever order the commands arrive in. Speech is synthesized here and injected through an
 * audio fork, so it is mixed on top of whatever else the call hears (a flow's talk or play keeps
 * running); stop() and flush() silence it at once (the fork's queue goes with the fork). The
 * session ends on stop or when the call hangs up.
 *
 * First audio (docs/benchmarks.md): the embedded provider streams espeak-ng's output,
 * resampled as it arrives, from a process started ahead of time (media-engine/tts/espeak-pool.ts);
 * a text this node has spoken before comes from memory.
 */
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { createTtsProvider, EspeakProvider, espeakPool, readWav, type EspeakStreamOptions, type ForkOptions, type TtsProvider } from '../../media-engine';
import type { SpeakingRow } from '../../core/repos/speakings';
import { PcmCache } from './pcm-cache';
import type { TalkVoice } from '../../core/speech/talk-voices';
import type { VoiceVendors } from '../../core/speech/vendors';
import { vendorKeyVariable } from '../../core/speech/vendors';
import type { EgressPolicy } from '../../core/net';
import { VENDOR_VOICES, VoiceError } from '../voices';
import type { MediaFork } from '../media-server/tap';

/** A speaking whose provider the operator mapped to a cloud voice (core/speech/talk-voices.ts). */
export interface SpeakingCloud {
  voice: TalkVoice;
  vendors: VoiceVendors;
  egress: EgressPolicy;
}

/** Audio queued ahead of the listener at most (the fork holds up to a minute). */
const MAX_AHEAD_MS = 30_000;

const providers = new Map<string, TtsProvider>();
function ttsFor(name: string, dataDir: string): TtsProvider {
  const key = `${name}\0${dataDir}`;
  let p = providers.get(key);
  if (!p) providers.set(key, (p = createTtsProvider(name, { cacheDir: path.join(dataDir, 'tts') })));
  return p;
}

const pcmCache = new PcmCache();

/** Where a say's first audio came from. */
export type AudioSource = 'warm' | 'cold' | 'cache' | 'file';

/** One say's timings (performance.now() ms), for the benchmark's breakdown. */
export interface SayTiming {
  speakingId: string;
  seq: number;
  /** the say command reached the session */
  arrivedAt: number;
  /** synthesis began (after earlier texts of the session) */
  startedAt: number;
  /** first audio handed to the engine */
  firstAudioAt: number;
  source: AudioSource;
}

/** Emits 'first-audio' (SayTiming) for every say; nothing listens outside benchmarks. */
export const speakingProbe = new EventEmitter<{ 'first-audio': [timing: SayTiming] }>();

/** What a SpeakingSession reports (event name → listener arguments). */
export interface SpeakingSessionEvents {
  /** a say was spoken in full */
  spoken: [said: { seq: number; text: string; durationMs: number }];
  /** the says numbered up to `upTo` were dropped */
  flushed: [upTo: number];
  /** the session ended */
  stopped: [];
  /** synthesis failed */
  error: [err: Error];
}

/** Something speech can be injected into: an Endpoint (one party hears it) or a Conference (all do). */
export interface Forkable {
  forkAudioStart(o: ForkOptions): Promise<MediaFork>;
}

export class SpeakingSession extends EventEmitter<SpeakingSessionEvents> {
  private readonly texts = new Map<number, { text: string; arrivedAt: number }>();
  private nextSeq = 1;
  private forks: MediaFork[] = [];
  private targets: Forkable[] = [];
  private draining = false;
  private aheadUntil = 0;
  /** bumped by flush: audio of an older generation is dropped */
  private generation = 0;
  private reopening: Promise<void> | null = null;
  stopped = false;
  /** ms from a say's arrival to its audio handed to the engine (benchmarks read it). */
  lastQueueMs = 0;

  constructor(
    readonly row: SpeakingRow,
    private readonly dataDir: string,
    /** the cloud voice that speaks instead of the local one (no fallback to it) */
    private readonly cloud: SpeakingCloud | null = null,
  ) {
    super();
    this.on('error', () => undefined);
  }

  /** espeak options of the embedded provider, or null for the others (or a voice espeak lacks). */
  private espeakOptions(ssml: boolean): EspeakStreamOptions | null {
    if (this.row.provider !== 'provider_a' || this.cloud) return null;
    const voice = new EspeakProvider({ outDir: this.dataDir }).voiceArg({ language: this.row.language, voice: this.row.voice_id || undefined });
    return { voice, ssml };
  }

  /** Opens the forks that carry the speech; the session is active afterwards. */
  async open(targets: Forkable[]): Promise<void> {
    this.targets = targets;
    try {
      const o = this.espeakOptions(false);
      if (o) espeakPool.prewarm(o);
    } catch {
      // a bad voice fails each say with an error instead
    }
    await this.openForks();
    if (this.stopped) await this.closeForks();
    else void this.drain();
  }

  private async openForks(): Promise<void> {
    for (const ep of this.targets) {
      // the fork's frames are not needed here: acknowledge them at once
      this.forks.push(await ep.forkAudioStart({ mix: 'out', onFrame: () => undefined, maxInFlight: 50 }));
    }
  }

  /** Queues text #seq; a number already spoken, flushed or queued is ignored (redelivery). */
  say(seq: number, text: string): void {
    if (this.stopped || seq < this.nextSeq || this.texts.has(seq)) return;
    this.texts.set(seq, { text, arrivedAt: performance.now() });
    if (this.forks.length && !this.reopening) void this.drain();
  }

  /**
   * Drops every text numbered up to `upTo` (spoken, speaking or queued) and what the engine still
   * holds of them; later texts are kept and spoken next. The session stays open.
   */
  async flush(upTo: number): Promise<void> {
    if (this.stopped) return;
    this.generation++;
    for (const seq of [...this.texts.keys()]) if (seq <= upTo) this.texts.delete(seq);
    this.nextSeq = Math.max(this.nextSeq, upTo + 1);
    this.aheadUntil = 0;
    if (this.targets.length === 0) return; // not open yet: nothing was sent
    const reopen = (async () => {
      await this.closeForks();
      if (!this.stopped) await this.openForks();
    })();
    this.reopening = reopen;
    try {
      await reopen;
    } finally {
      if (this.reopening === reopen) this.reopening = null;
    }
    if (this.stopped) await this.closeForks();
    else {
      this.emit('flushed', upTo);
      void this.drain();
    }
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (!this.stopped && this.texts.has(this.nextSeq)) {
        if (this.reopening) await this.reopening;
        const seq = this.nextSeq;
        const item = this.texts.get(seq);
        if (!item || this.stopped) continue;
        const gen = this.generation;
        const t0 = Date.now();
        let spokenSamples = 0;
        try {
          // keep at most MAX_AHEAD_MS queued in the engine; long monologues wait here
          const ahead = this.aheadUntil - Date.now();
          if (ahead > MAX_AHEAD_MS) await new Promise((r) => setTimeout(r, ahead - MAX_AHEAD_MS));
          if (this.stopped || gen !== this.generation) continue;
          spokenSamples = await this.speak(seq, item.text, item.arrivedAt, gen);
        } catch (err) {
          this.emit('error', err instanceof Error ? err : new Error(String(err)));
        }
        this.texts.delete(seq);
        if (this.nextSeq === seq) this.nextSeq++;
        if (this.stopped) break;
        if (gen !== this.generation) continue; // flushed while speaking
        this.aheadUntil = Math.max(this.aheadUntil, t0) + spokenSamples / 8;
        this.emit('spoken', { seq, text: item.text, durationMs: Math.round(spokenSamples / 8) });
      }
    } finally {
      this.draining = false;
    }
  }

  /** Synthesizes one text into the forks; resolves with the samples sent. */
  private async speak(seq: number, text: string, arrivedAt: number, gen: number): Promise<number> {
    const startedAt = performance.now();
    let source: AudioSource = 'file';
    let sent = 0;
    const send = (samples: Int16Array) => {
      if (this.stopped || gen !== this.generation) return;
      if (sent === 0) {
        const now = performance.now();
        this.lastQueueMs = Math.round(now - arrivedAt);
        speakingProbe.emit('first-audio', { speakingId: this.row.id, seq, arrivedAt, startedAt, firstAudioAt: now, source } satisfies SayTiming);
      }
      for (const f of this.forks) f.inject(samples);
      sent += samples.length;
    };
    if (this.cloud) {
      await this.speakCloud(this.cloud, text, gen, send);
      return sent;
    }
    const ssml = /^\s*<speak[\s>]/i.test(text);
    const o = this.espeakOptions(ssml);
    if (!o) {
      const r = await ttsFor(this.row.provider, this.dataDir).synthesize(text, { language: this.row.language, voice: this.row.voice_id || undefined, ssml });
      send(readWav(r.path).samples);
      return sent;
    }
    const key = PcmCache.key([o.voice, o.speed ?? 165, ssml, text]);
    const cached = pcmCache.get(key);
    if (cached) {
      source = 'cache';
      send(cached);
      return sent;
    }
    const warmBefore = espeakPool.stats.warm;
    const parts: Int16Array[] = [];
    let kept = 0;
    const speaking = espeakPool.speak(text, o, (samples) => {
      if (kept < 512 * 1024) {
        parts.push(samples);
        kept += samples.length;
      }
      send(samples);
    });
    source = espeakPool.stats.warm > warmBefore ? 'warm' : 'cold';
    const total = await speaking;
    if (kept === total && total > 0) {
      const all = new Int16Array(total);
      let off = 0;
      for (const p of parts) {
        all.set(p, off);
        off += p.length;
      }
      pcmCache.set(key, all);
    }
    return sent;
  }

  /** One text through the cloud voice, streamed into the forks as it arrives; stop or flush cuts it off. */
  private async speakCloud(cloud: SpeakingCloud, text: string, gen: number, send: (samples: Int16Array) => void): Promise<void> {
    const type = cloud.voice.type;
    const vendor = cloud.vendors[type];
    if (!vendor.apiKey) throw new VoiceError(type, 'no_key', `no API key: set ${vendorKeyVariable(type)} on the server`);
    const ctl = new AbortController();
    const voice = { text, voice: this.row.voice_id || cloud.voice.voice, language: this.row.language, baseUrl: vendor.baseUrl, apiKey: vendor.apiKey, region: vendor.region };
    for await (const pcm of VENDOR_VOICES[type].stream({ ...voice, egress: cloud.egress, signal: ctl.signal })) {
      if (this.stopped || gen !== this.generation) {
        ctl.abort();
        break;
      }
      send(pcm);
    }
  }

  /** Silences the session at once; idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.texts.clear();
    await this.closeForks();
    this.emit('stopped');
  }

  private async closeForks(): Promise<void> {
    const forks = this.forks;
    this.forks = [];
    await Promise.allSettled(forks.map((f) => f.stop()));
  }
}
