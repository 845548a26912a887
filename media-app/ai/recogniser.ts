/**
 * ai_talk's recogniser with its fallback by choice (`parameter.stt_fallback`, docs/ai.md
 * "Recognisers"): the first recogniser hears the caller; when it fails (a refused key, the vendor
 * unreachable or refused by the egress policy, an error message, the socket closed) and a fallback is
 * named, the fallback takes over for the rest of the session, the last 2 s of audio replayed into it
 * so the words in flight are not lost, and `fallback` says so; with no fallback (or when the fallback
 * fails too) `failed` ends the session. Nothing is ever replaced silently.
 */
import { FrameClock } from './frame-clock';
import { EventEmitter } from 'node:events';
import { createSttProvider, type SttStream, type TranscriptEvent } from '../../media-engine';

export interface RecogniserOptions {
  language: string;
  phrases?: string[];
  /** the first recogniser's own key (the AI's parameter.stt_key); the fallback takes the platform's */
  key?: string;
  /** the silence that ends an utterance, for recognisers told it (the AI's min_endpointing_delay_ms) */
  endpointingMs?: number;
}

export interface SttFallback {
  from: string;
  to: string;
  reason: string;
}

export interface RecogniserEvents {
  transcript: [TranscriptEvent];
  fallback: [SttFallback];
  /** no recogniser is left: the message names the vendor and what went wrong */
  failed: [Error];
}

/** 20 ms frames kept for the fallback: 2 s. */
const REPLAY_FRAMES = 100;

export class Recogniser extends EventEmitter<RecogniserEvents> {
  private stream: SttStream | null = null;
  private current: string;
  private readonly primary: string;
  private fallbackLeft: string | undefined;
  private readonly recent: { frame: Int16Array; at: number }[] = [];
  /** when each frame of the current stream was written (wallTimeOf) */
  private readonly clock = new FrameClock();
  private stopped = false;
  /** the rate of the frames written (the leg's: 16000 on a wideband leg); set before start() */
  rate: 8000 | 16000 = 8000;

  /** Names are checked here (an unknown one throws): no recogniser is made yet. */
  constructor(
    primary: string | undefined,
    fallback: string | undefined,
    private readonly o: RecogniserOptions,
  ) {
    super();
    this.current = primary || 'pocketsphinx';
    this.primary = this.current;
    createSttProvider(this.current);
    if (fallback) createSttProvider(fallback);
    this.fallbackLeft = fallback && fallback !== this.current ? fallback : undefined;
  }

  /** The recogniser in use. */
  get name(): string {
    return this.current;
  }

  /** Opens the first recogniser (or, if it cannot start, the fallback); throws when none can. */
  start(): void {
    try {
      this.open(this.current);
    } catch (e) {
      if (!this.fallbackLeft) throw e;
      this.switchOver((e as Error).message);
    }
  }

  write(frame: Int16Array): void {
    if (this.stopped) return;
    const at = Date.now();
    if (this.fallbackLeft) {
      this.recent.push({ frame: frame.slice(), at });
      if (this.recent.length > REPLAY_FRAMES) this.recent.shift();
    }
    this.written(frame, at);
    this.stream?.write(frame);
  }

  /**
   * When the caller said what is `streamMs` into the current recogniser's audio (a transcript's
   * offsetMs + durationMs): the wall time its frame was written; null when that is not known (older
   * than 30 s, or not written yet).
   */
  wallTimeOf(streamMs: number): number | null {
    return this.clock.wallTimeOf(streamMs);
  }

  private written(frame: Int16Array, at: number): void {
    this.clock.write(frame.length, this.rate, at);
  }

  abort(): void {
    this.stopped = true;
    this.stream?.abort();
  }

  private open(name: string): void {
    const apiKey = name === this.primary ? this.o.key : undefined;
    const s = createSttProvider(name).createStream({ language: this.o.language, phrases: this.o.phrases, direction: 'inbound', sampleRate: this.rate, apiKey, endpointingMs: this.o.endpointingMs });
    this.stream = s;
    this.clock.reset();
    s.on('transcript', (t) => {
      if (this.stream === s) this.emit('transcript', t);
    });
    s.on('error', (e: Error) => {
      if (this.stream !== s || this.stopped) return;
      if (this.fallbackLeft) return this.switchOver(e.message);
      this.stopped = true;
      this.emit('failed', e);
    });
  }

  private switchOver(reason: string): void {
    const from = this.current;
    const to = this.fallbackLeft!;
    this.fallbackLeft = undefined;
    this.stream?.abort();
    this.current = to;
    try {
      this.open(to);
    } catch (e) {
      this.stopped = true;
      this.emit('failed', e as Error);
      return;
    }
    this.emit('fallback', { from, to, reason });
    // replayed with the times they were said
    for (const f of this.recent.splice(0)) {
      this.written(f.frame, f.at);
      this.stream!.write(f.frame);
    }
  }
}
