/**
 * Streaming speech-to-text: the engine writes 20 ms frames of one direction of a call, the
 * provider emits transcript segments. Offline default: pocketsphinx (weak on free speech, usable
 * with a phrase list); cloud providers implement the same interface.
 */
import type { EventEmitter } from 'node:events';
import type { Frame } from '../dsp/frame';

export type Direction = 'inbound' | 'outbound';

export interface TranscriptEvent {
  text: string;
  /** true for a finished utterance; false for an interim guess (providers that have them). */
  final: boolean;
  /** Start of the utterance, ms since the first frame written to the stream. */
  offsetMs: number;
  durationMs: number;
  direction: Direction;
  /** 0..1 when the provider gives one. */
  confidence?: number;
  /**
   * The vendor's end-of-utterance signal on a final (Deepgram's speech_final): false = more words of
   * the same utterance follow. Absent when the provider has none (pocketsphinx: each final is one).
   */
  endOfUtterance?: boolean;
}

export interface SttStreamOptions {
  /** BCP-47 tag. Default 'en-US'. */
  language?: string;
  /** Which side of the call this stream carries; copied into every event. Default 'inbound'. */
  direction?: Direction;
  /** Restrict recognition to these phrases (much more accurate offline). */
  phrases?: string[];
  /** A full JSGF grammar (pocketsphinx); overrides `phrases`. */
  grammar?: string;
  /**
   * Silence that ends an utterance, ms, for recognisers that are told it (Deepgram's `endpointing`);
   * absent: the vendor's default. An AI's voice session sends its `min_endpointing_delay_ms`.
   */
  endpointingMs?: number;
  /** The rate of the frames written: 8000 (160-sample frames, default) or 16000 (a wideband leg's 320). */
  sampleRate?: SampleRate;
  /**
   * A cloud recogniser's key for this stream (an AI's `parameter.stt_key`), used instead of the
   * platform's `<VENDOR>_API_KEY`; empty or absent: the platform's. Never logged or put in an error.
   */
  apiKey?: string;
}

export type SampleRate = 8000 | 16000;

/** The rate asked for, checked (a provider is told the truth about its bytes or refuses). */
export function sampleRateOf(o: SttStreamOptions): SampleRate {
  const r = o.sampleRate ?? 8000;
  if (r !== 8000 && r !== 16000) throw new SttError('RECOGNIZER_FAILED', `unsupported sample rate ${String(r)}: 8000 or 16000`);
  return r;
}

export interface SttStreamEvents {
  transcript: [TranscriptEvent];
  error: [Error];
  /** after end() or a failure; the recogniser's process and files are gone */
  close: [];
}

/**
 * Events: SttStreamEvents. write() never blocks: if the recogniser falls behind, frames are dropped
 * and counted.
 */
export interface SttStream extends EventEmitter<SttStreamEvents> {
  write(frame: Frame): void;
  /** No more audio: resolves once the last transcript has been emitted. */
  end(): Promise<void>;
  /** Stop at once, discarding pending audio. */
  abort(): void;
  readonly droppedFrames: number;
  /** How full the backlog toward the recogniser is, 0 to 1: at 1, write() drops (a file's feeder waits below it). */
  backlogShare(): number;
}

export interface SttProvider {
  readonly name: string;
  createStream(opts?: SttStreamOptions): SttStream;
}

export class SttError extends Error {
  constructor(
    readonly code: 'UNSUPPORTED_LANGUAGE' | 'BAD_GRAMMAR' | 'RECOGNIZER_FAILED' | 'UNKNOWN_PROVIDER',
    message: string,
  ) {
    super(message);
    this.name = 'SttError';
  }
}
