/**
 * Listening for one spoken answer on a call (speech_gather, TwiML <Gather input="speech">): the
 * endpoint's VAD tap says where the caller's speech starts (barge-in) and when it has been followed
 * by `speechTimeoutMs` of silence; a recogniser of its own (media-engine Transcriber on an 'in' fork,
 * so a running transcribe_start is not disturbed) gives the words. When the speech ends the
 * recogniser is drained (its last segments) and the answer is every final segment's text, with the
 * mean of their confidences.
 *
 * States: waiting (no speech yet) → speaking (VAD start) → done (VAD stop, `maxSpeechMs`, stop()).
 */
import { EventEmitter } from 'node:events';
import { Transcriber, type SpeechEvent, type Transcript } from '../../media-engine';
import type { CallEndpoint } from '../media-server/endpoint';

export interface ListenOptions {
  language: string;
  provider?: string;
  phrases?: string[];
  /** Silence after speech that ends it, ms; 0 = auto (AUTO_SPEECH_TIMEOUT_MS). */
  speechTimeoutMs: number;
  /** The longest answer, ms (Twilio: 60 s). */
  maxSpeechMs?: number;
}

export interface Heard {
  text: string;
  /** 0-1, the mean of the final segments' confidences; undefined when the recogniser gives none. */
  confidence: number | undefined;
}

/** speechTimeout="auto": a pause this long ends the answer. */
export const AUTO_SPEECH_TIMEOUT_MS = 800;
export const MAX_SPEECH_MS = 60_000;

type State = 'waiting' | 'speaking' | 'done';

export interface SpeechListenerEvents {
  /** the caller started speaking (VAD): prompts are cut here */
  speech_start: [];
  /** the answer is complete (or the listener was stopped) */
  done: [Heard];
  /** a segment of words while listening: an interim guess (final false) or a finished segment */
  partial: [Transcript];
}

export class SpeechListener extends EventEmitter<SpeechListenerEvents> {
  private state: State = 'waiting';
  private readonly finals: Transcript[] = [];
  private maxTimer: NodeJS.Timeout | null = null;
  private readonly onSpeech = (e: SpeechEvent) => (e.state === 'start' ? this.started() : void this.finish());
  private readonly onDestroy = () => void this.finish();
  readonly result: Promise<Heard>;

  private constructor(
    private readonly ep: CallEndpoint,
    private readonly t: Transcriber,
    private readonly o: ListenOptions,
  ) {
    super();
    this.result = new Promise((r) => this.once('done', r));
  }

  /** Starts the VAD tap and the recogniser; rejects (nothing left running) when either cannot start. */
  static async start(ep: CallEndpoint, o: ListenOptions): Promise<SpeechListener> {
    const t = new Transcriber({ language: o.language, direction: 'in', provider: o.provider || undefined, phrases: o.phrases?.length ? o.phrases : undefined });
    const l = new SpeechListener(ep, t, o);
    t.on('transcript', (x: Transcript) => {
      if (!x.text.trim()) return;
      if (x.final) l.finals.push(x);
      if (l.state !== 'done') l.emit('partial', x);
    });
    t.on('error', () => undefined);
    await t.start((f) => ep.forkAudioStart(f));
    try {
      ep.on('speech', l.onSpeech);
      ep.once('destroy', l.onDestroy);
      await ep.vadStart({ mode: 2, startMs: 200, stopMs: o.speechTimeoutMs > 0 ? o.speechTimeoutMs : AUTO_SPEECH_TIMEOUT_MS });
    } catch (e) {
      l.detach();
      t.abort();
      throw e;
    }
    return l;
  }

  get speaking(): boolean {
    return this.state === 'speaking';
  }

  get heardSpeech(): boolean {
    return this.state !== 'waiting' || this.finals.length > 0;
  }

  private started(): void {
    if (this.state !== 'waiting') return;
    this.state = 'speaking';
    this.maxTimer = setTimeout(() => void this.finish(), this.o.maxSpeechMs ?? MAX_SPEECH_MS);
    this.emit('speech_start');
  }

  /** Ends listening now: drains the recogniser and resolves `result` (empty text when nothing was said). */
  async finish(): Promise<Heard> {
    if (this.state === 'done') return this.result;
    this.state = 'done';
    this.detach();
    if (!this.ep.destroyed) await this.ep.vadStop().catch(() => undefined);
    if (this.ep.destroyed) this.t.abort();
    else await this.t.stop().catch(() => undefined);
    const text = this.finals
      .map((x) => x.text.trim())
      .join(' ')
      .trim();
    const cs = this.finals.flatMap((x) => (x.confidence === undefined ? [] : [x.confidence]));
    const confidence = cs.length ? Math.min(1, Math.max(0, cs.reduce((a, b) => a + b, 0) / cs.length)) : undefined;
    this.emit('done', { text, confidence });
    return this.result;
  }

  /** Drops the audio and the answer (the call went away or the flow was stopped). */
  abort(): void {
    if (this.state === 'done') return;
    this.state = 'done';
    this.detach();
    if (!this.ep.destroyed) void this.ep.vadStop().catch(() => undefined);
    this.t.abort();
    this.emit('done', { text: '', confidence: undefined });
  }

  private detach(): void {
    if (this.maxTimer) clearTimeout(this.maxTimer);
    this.maxTimer = null;
    this.ep.off('speech', this.onSpeech);
    this.ep.off('destroy', this.onDestroy);
  }
}
