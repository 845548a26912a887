/**
 * transcribe_speech_started / _interim / _ended (voipbin's streaming speech events): derived from
 * what the recogniser reports on each direction of a live transcribe. An utterance starts with its
 * first result, interim results (providers that have them, e.g. Deepgram) are published as they
 * come, and the final result ends it (that text is the transcript_created that follows). Each
 * direction is one "streaming" with its own streaming_id for the life of the transcribe.
 * pocketsphinx gives only final results, so with it started and ended come together at the end of
 * each utterance, started's tm_event still being when the utterance began.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { EventPublisher } from '../../core/events/bus';
import { publishResourceEvent, type EventType } from '../../core/events/catalogue';
import { formatLegacy } from '../../core/time';
import type { TranscribeRow } from '../../core/repos/transcribes';

export interface SpeechResult {
  text: string;
  final: boolean;
  direction: 'in' | 'out';
  /** utterance start, ms after transcription started */
  offsetMs: number;
  durationMs?: number;
}

export class SpeechEvents {
  private readonly streamings = new Map<'in' | 'out', { id: string; speaking: boolean }>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly row: TranscribeRow,
    private readonly events: EventPublisher,
    private readonly logger: Logger,
  ) {}

  private streaming(direction: 'in' | 'out') {
    let s = this.streamings.get(direction);
    if (!s) this.streamings.set(direction, (s = { id: randomUUID(), speaking: false }));
    return s;
  }

  /** One recogniser result (interim or final) of this transcribe. */
  onResult(r: SpeechResult): void {
    if (!r.text.trim()) return;
    const s = this.streaming(r.direction);
    const base = this.row.tm_create.getTime();
    if (!s.speaking) {
      s.speaking = true;
      this.publish('transcribe_speech_started', s.id, r.direction, '', new Date(base + Math.max(0, r.offsetMs)));
    }
    if (!r.final) {
      this.publish('transcribe_speech_interim', s.id, r.direction, r.text, new Date());
      return;
    }
    s.speaking = false;
    const end = r.durationMs !== undefined ? new Date(base + Math.max(0, r.offsetMs + r.durationMs)) : new Date();
    this.publish('transcribe_speech_ended', s.id, r.direction, '', end);
  }

  /** Ends utterances still open (the transcribe stopped mid-sentence). */
  close(): Promise<unknown> {
    for (const [direction, s] of this.streamings) {
      if (!s.speaking) continue;
      s.speaking = false;
      this.publish('transcribe_speech_ended', s.id, direction, '', new Date());
    }
    return this.chain;
  }

  private publish(type: EventType, streamingId: string, direction: 'in' | 'out', message: string, tmEvent: Date): void {
    const payload = {
      id: randomUUID(),
      customer_id: this.row.customer_id,
      streaming_id: streamingId,
      transcribe_id: this.row.id,
      direction,
      message,
      tm_event: formatLegacy(tmEvent),
      tm_create: formatLegacy(new Date()),
    };
    // in order, and never holding up recognition
    this.chain = this.chain
      .then(() => publishResourceEvent(this.events, type, payload))
      .catch((err: Error) => this.logger.warn({ err: err.message, transcribe: this.row.id }, `could not publish ${type}`));
  }
}
