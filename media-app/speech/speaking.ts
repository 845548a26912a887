/**
 * One speaking session on this node: texts arrive numbered (say #1, #2, ...) and are spoken in that
 * order, whatever order the commands arrive in. Speech is synthesized here (the embedded TTS takes
 * ~10 ms a sentence) and injected through an audio fork, so it is mixed on top of whatever else the
 * call hears (a flow's talk or play keeps running) and stop() silences it at once (the fork's queue
 * goes with it). The session ends on stop or when the call hangs up.
 */
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { readWav } from '../../media-engine/audio/wav';
import { createTtsProvider, EspeakProvider, espeakStream, type TtsProvider } from '../../media-engine/tts';
import type { AudioFork, ForkOptions } from '../../media-engine';
import type { SpeakingRow } from '../../core/repos/speakings';

/** Audio queued ahead of the listener at most (the fork holds up to a minute). */
const MAX_AHEAD_MS = 30_000;

const providers = new Map<string, TtsProvider>();
function ttsFor(name: string, dataDir: string): TtsProvider {
  const key = `${name}\0${dataDir}`;
  let p = providers.get(key);
  if (!p) providers.set(key, (p = createTtsProvider(name, { cacheDir: path.join(dataDir, 'tts') })));
  return p;
}

/** Something speech can be injected into: an Endpoint (one party hears it) or a Conference (all do). */
export interface Forkable {
  forkAudioStart(o: ForkOptions): Promise<AudioFork>;
}

export class SpeakingSession extends EventEmitter {
  private readonly texts = new Map<number, string>();
  private nextSeq = 1;
  private forks: AudioFork[] = [];
  private draining = false;
  private aheadUntil = 0;
  stopped = false;
  /** ms from a say's arrival to its audio handed to the engine (benchmarks read it). */
  lastQueueMs = 0;

  constructor(readonly row: SpeakingRow, private readonly dataDir: string) {
    super();
    this.on('error', () => undefined);
  }

  /** Opens the forks that carry the speech; the session is active afterwards. */
  async open(targets: Forkable[]): Promise<void> {
    for (const ep of targets) {
      // the fork's frames are not needed here: acknowledge them at once
      this.forks.push(await ep.forkAudioStart({ mix: 'out', onFrame: () => undefined, maxInFlight: 50 }));
    }
    if (this.stopped) await this.closeForks();
    else void this.drain();
  }

  /** Queues text #seq; a number already spoken or queued is ignored (redelivery). */
  say(seq: number, text: string): void {
    if (this.stopped || seq < this.nextSeq || this.texts.has(seq)) return;
    this.texts.set(seq, text);
    if (this.forks.length) void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (!this.stopped && this.texts.has(this.nextSeq)) {
        const seq = this.nextSeq;
        const text = this.texts.get(seq)!;
        const t0 = Date.now();
        let spokenSamples = 0;
        try {
          // keep at most MAX_AHEAD_MS queued in the engine; long monologues wait here
          const ahead = this.aheadUntil - Date.now();
          if (ahead > MAX_AHEAD_MS) await new Promise((r) => setTimeout(r, ahead - MAX_AHEAD_MS));
          if (this.stopped) break;
          const send = (samples: Int16Array) => {
            if (this.stopped) return;
            if (spokenSamples === 0) this.lastQueueMs = Date.now() - t0;
            for (const f of this.forks) f.inject(samples);
            spokenSamples += samples.length;
          };
          const ssml = /^\s*<speak[\s>]/i.test(text);
          if (this.row.provider === 'provider_a') {
            // the embedded provider streams: first audio goes out while the rest is synthesized
            const voice = new EspeakProvider({ outDir: this.dataDir }).voiceArg({ language: this.row.language, voice: this.row.voice_id || undefined });
            await espeakStream(text, { voice, ssml }, send);
          } else {
            const r = await ttsFor(this.row.provider, this.dataDir).synthesize(text, { language: this.row.language, voice: this.row.voice_id || undefined, ssml });
            send(readWav(r.path).samples);
          }
        } catch (err) {
          this.emit('error', err);
        }
        this.texts.delete(seq);
        this.nextSeq++;
        if (this.stopped) break;
        this.aheadUntil = Math.max(this.aheadUntil, t0) + spokenSamples / 8;
        const durationMs = Math.round(spokenSamples / 8);
        this.emit('spoken', { seq, text, durationMs });
      }
    } finally {
      this.draining = false;
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
