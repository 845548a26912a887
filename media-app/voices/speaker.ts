/**
 * Plays an AI's cloud voice into a call: each sentence is streamed from the vendor and injected
 * through an 'out' audio fork as it arrives (first audio goes out with the vendor's first bytes),
 * sentences in order, the next one synthesised while the previous one plays.
 *
 * Fallback by choice: with a fallback voice configured, a vendor error or no first audio within
 * `firstByteMs` switches the session to the fallback (the sentence is spoken again with it, and
 * later ones too) and `onFallback` reports it; without one, the error ends the speech.
 */
import path from 'node:path';
import { createTtsProvider, readWav, type TtsProvider } from '../../media-engine';
import type { CallEndpoint } from '../media-server/endpoint';
import type { EgressPolicy } from '../../core/net';
import { isVendorTts } from '../../core/speech/voices';
import { vendorKeyVariable, type VoiceVendors } from '../../core/speech/vendors';
import { VENDOR_VOICES } from './registry';
import { VoiceError } from './vendor';
import { PcmToRate } from './pcm';
import { onceAborted } from '../kit/clock';
import type { MediaFork } from '../media-server/tap';

export interface VoiceChoice {
  /** a tts_type: a vendor or a local voice */
  type: string;
  voice: string;
  /** the AI's own key for the vendor ('' = the platform's) */
  key: string;
}

export interface SpeakerDeps {
  egress: EgressPolicy;
  vendors: VoiceVendors;
  /** local voices' cache */
  cacheDir: string;
  onFallback(e: { from: string; to: string; reason: string }): void;
  /**
   * false: the voice's fork is opened without `reportStarts`, for a media backend that cannot report
   * when injected audio starts (fsmrf: mod_audio_fork plays it as it comes); `firstAudioAt` is then 0.
   */
  reportStarts?: boolean;
}

/** What one sentence took: ms from the request to the vendor's first audio, and who spoke it. */
export interface Spoken {
  firstByteMs: number;
  via: string;
  /**
   * When its first audio went out (Date.now()): the engine's stamp of its first frame, or, with audio of
   * this voice still queued before it, when that was due to end; 0 when none went (cleared first)
   */
  firstAudioAt: number;
}

const locals = new Map<string, TtsProvider>();
/** how long the engine's report of a sentence's first frame out is waited for */
const FIRST_OUT_WAIT_MS = 2000;

export class Speaker {
  private fork: MediaFork | null = null;
  private opening: Promise<MediaFork> | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private playEnd = 0;
  private generation = 0;
  private onFallbackVoice = false;

  constructor(
    private readonly ep: CallEndpoint,
    private readonly primary: VoiceChoice,
    private readonly fallback: VoiceChoice | null,
    private readonly language: string,
    private readonly firstByteMs: number,
    private readonly deps: SpeakerDeps,
  ) {}

  /** Speaks `text` after the sentences before it; resolves once it has played out. */
  async speak(text: string, signal: AbortSignal): Promise<Spoken> {
    const turn = this.chain.then(() => this.synthesise(text, signal));
    this.chain = turn.catch(() => undefined);
    const spoken = await turn;
    const left = this.playEnd - Date.now();
    if (left > 0 && !signal.aborted)
      await new Promise<void>((r) => {
        const t = setTimeout(() => (off(), r()), left);
        const off = onceAborted(signal, () => (clearTimeout(t), r()));
      });
    return spoken;
  }

  /** Silences the voice at once (barge-in): what is queued in the engine goes with the fork. */
  async stop(): Promise<void> {
    this.generation++;
    this.playEnd = 0;
    const f = this.fork;
    this.fork = null;
    this.opening = null;
    await f?.stop().catch(() => null);
  }

  /** Whether the voice's fork reports when injected audio starts (SpeakerDeps.reportStarts, default true). */
  private get reportsStarts(): boolean {
    return this.deps.reportStarts ?? true;
  }

  private async out(): Promise<MediaFork> {
    if (this.fork) return this.fork;
    // at the leg's rate: its `rate` (16000 on a G.722 or Opus leg) is the rate the voice is injected at
    this.opening ??= this.ep.forkAudioStart({ mix: 'out', legRate: true, onFrame: () => undefined, maxInFlight: 50, reportStarts: this.reportsStarts }).then((f) => (this.fork = f));
    return this.opening;
  }

  private async synthesise(text: string, signal: AbortSignal): Promise<Spoken> {
    if (!this.onFallbackVoice) {
      try {
        return await this.play(this.primary, text, signal, this.fallback ? this.firstByteMs : 0);
      } catch (e) {
        if (!this.fallback || signal.aborted) throw e;
        this.onFallbackVoice = true;
        this.deps.onFallback({ from: this.primary.type, to: this.fallback.type, reason: (e as Error).message });
      }
    }
    return this.play(this.fallback!, text, signal, 0);
  }

  /** One sentence with one voice; `deadlineMs` > 0: no first audio by then is an error. */
  private async play(choice: VoiceChoice, text: string, signal: AbortSignal, deadlineMs: number): Promise<Spoken> {
    const gen = this.generation;
    const started = Date.now();
    const fork = await this.out();
    let firstByteMs = -1;
    /** when the first audio goes out (Spoken.firstAudioAt), asked as it goes to the engine */
    let firstOut: Promise<number | null> = Promise.resolve(null);
    const wide = fork.rate === 16000;
    const send = (pcm: Int16Array, rate: 8000 | 16000) => {
      if (gen !== this.generation || signal.aborted || !pcm.length) return;
      if (firstByteMs < 0) {
        const now = Date.now();
        firstByteMs = now - started;
        if (!this.reportsStarts) firstOut = Promise.resolve(null);
        else firstOut = this.playEnd > now ? Promise.resolve(Math.round(this.playEnd)) : fork.nextStart(FIRST_OUT_WAIT_MS);
      }
      fork.inject(pcm, rate);
      this.playEnd = Math.max(this.playEnd, Date.now()) + pcm.length / (rate / 1000);
    };
    if (!isVendorTts(choice.type)) {
      const p = locals.get(choice.type) ?? createTtsProvider(choice.type, { cacheDir: path.join(this.deps.cacheDir, 'tts') });
      locals.set(choice.type, p);
      // a wideband leg: the synthesiser's own rate (espeak-ng's 22,050 Hz), resampled once to 16 kHz
      const r = await p.synthesize(text, { language: this.language, voice: choice.voice || undefined, wideband: wide });
      const { info, samples } = readWav(r.path);
      const rate = info.format.sampleRate;
      if (rate === 8000 || !wide) send(samples, 8000);
      else {
        const pcm = new PcmToRate(rate, 16000);
        send(pcm.pcm(samples), 16000);
        pcm.close();
      }
      return { firstByteMs: Math.max(0, firstByteMs), via: choice.type, firstAudioAt: (await firstOut) ?? 0 };
    }
    const vendor = this.deps.vendors[choice.type];
    // a vendor sending linear PCM above 8 kHz speaks to a wideband leg at 16 kHz; µ-law ones at 8 kHz
    const rate = wide && VENDOR_VOICES[choice.type].pcmRate ? 16000 : 8000;
    const apiKey = choice.key || vendor.apiKey;
    if (!apiKey) throw new VoiceError(choice.type, 'no_key', `no API key: set the AI's parameter.tts_key or ${vendorKeyVariable(choice.type)} on the server`);
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let late = false;
    const timer = deadlineMs > 0 ? setTimeout(() => ((late = true), ctl.abort()), deadlineMs) : null;
    try {
      for await (const pcm of VENDOR_VOICES[choice.type].stream({
        text,
        voice: choice.voice,
        language: this.language,
        baseUrl: vendor.baseUrl,
        apiKey,
        egress: this.deps.egress,
        signal: ctl.signal,
        rate,
        region: vendor.region,
      })) {
        if (timer) clearTimeout(timer);
        send(pcm, rate);
        if (ctl.signal.aborted) break;
      }
    } catch (e) {
      if (late) throw new VoiceError(choice.type, 'timeout', `no audio within ${deadlineMs} ms`);
      throw e;
    } finally {
      if (timer) clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
    if (late && firstByteMs < 0) throw new VoiceError(choice.type, 'timeout', `no audio within ${deadlineMs} ms`);
    return { firstByteMs: Math.max(0, firstByteMs), via: choice.type, firstAudioAt: (await firstOut) ?? 0 };
  }
}
