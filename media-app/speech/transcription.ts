/**
 * Live transcription of a call on this node (transcribe_start, POST /transcribes): the endpoint's
 * transcriber (media-engine/transcriber.ts) feeds the chosen STT provider; each final segment is
 * stored as a Transcript and published as transcript_created. The Transcribe row moves
 * progressing → done on stop or hangup (transcribe_done), and its on_end_flow_id, if any, runs.
 */
import type { Logger } from 'pino';
import { Transcriber, type Conference, type Transcript } from '../../media-engine';
import type { CallEndpoint } from '../media-server/endpoint';
import { publishResourceEvent } from '../../core/events/catalogue';
import type { EventPublisher } from '../../core/events/bus';
import type { Db } from '../../core/db/knex';
import { transcribeJson, transcribesRepo, type TranscribeRow } from '../../core/repos/transcribes';
import { transcriptJson, transcriptsRepo } from '../../core/repos/transcripts';
import { SpeechEvents } from './speech-events';

export interface SpeechDeps {
  db: Db;
  events: EventPublisher;
  logger: Logger;
  /** Runs a flow when a transcribe ends (on_end_flow_id); absent in tests that do not need it. */
  runOnEnd?: (row: TranscribeRow) => Promise<void>;
}

/** Stores one segment and publishes transcript_created. */
export async function storeSegment(deps: SpeechDeps, row: TranscribeRow, t: { text: string; direction: 'in' | 'out'; offsetMs: number; confidence?: number }): Promise<void> {
  const s = await transcriptsRepo(deps.db).create({
    customer_id: row.customer_id,
    transcribe_id: row.id,
    direction: t.direction,
    message: t.text,
    offset_ms: Math.max(0, Math.round(t.offsetMs)),
    confidence: t.confidence,
    tm_transcript: new Date(row.tm_create.getTime() + Math.max(0, t.offsetMs)),
  });
  await publishResourceEvent(deps.events, 'transcript_created', transcriptJson(s));
}

/** progressing → done once: publishes transcribe_done and runs on_end_flow_id. */
export async function finishTranscribe(deps: SpeechDeps, id: string): Promise<void> {
  const done = await transcribesRepo(deps.db).finish(id);
  if (!done) return;
  await publishResourceEvent(deps.events, 'transcribe_done', transcribeJson(done)).catch(() => undefined);
  if (deps.runOnEnd) await deps.runOnEnd(done).catch((err: Error) => deps.logger.warn({ err: err.message, transcribe: id }, 'on_end_flow_id did not start'));
}

export class LiveTranscription {
  private writes: Promise<unknown> = Promise.resolve();
  private ended = false;
  private readonly speech: SpeechEvents;

  private constructor(
    readonly row: TranscribeRow,
    private readonly ep: CallEndpoint,
    private readonly deps: SpeechDeps,
  ) {
    this.speech = new SpeechEvents(row, deps.events, deps.logger);
  }

  /** Starts recognising; rejects (leaving nothing running) when the provider cannot start. */
  static async start(row: TranscribeRow, ep: CallEndpoint, deps: SpeechDeps, phrases?: string[]): Promise<LiveTranscription> {
    const lt = new LiveTranscription(row, ep, deps);
    const onTranscript = (t: Transcript) => lt.onSegment(t);
    const onError = (e: Error) => deps.logger.warn({ err: e.message, transcribe: row.id }, 'transcription error');
    ep.on('transcript', onTranscript);
    ep.on('transcriptionError', onError);
    ep.once('destroy', () => void lt.stop());
    lt.detach = () => {
      ep.off('transcript', onTranscript);
      ep.off('transcriptionError', onError);
    };
    try {
      await ep.transcribeStart({ language: row.language, direction: row.direction, provider: row.provider || undefined, phrases: phrases?.length ? phrases : undefined });
    } catch (err) {
      lt.detach();
      throw err;
    }
    await publishResourceEvent(deps.events, 'transcribe_progressing', transcribeJson(row)).catch(() => undefined);
    return lt;
  }

  private detach: () => void = () => undefined;

  private onSegment(t: Transcript): void {
    this.speech.onResult(t);
    if (!t.final || !t.text.trim()) return;
    // keep segments in the order they were recognised
    this.writes = this.writes
      .then(() => storeSegment(this.deps, this.row, { text: t.text, direction: t.direction, offsetMs: t.offsetMs, confidence: t.confidence }))
      .catch((err: Error) => this.deps.logger.warn({ err: err.message, transcribe: this.row.id }, 'transcript not stored'));
  }

  /** Stops recognising, stores the last segments, then marks the transcribe done. Idempotent. */
  async stop(): Promise<void> {
    if (this.ended) return this.writes.then(() => undefined);
    this.ended = true;
    if (!this.ep.destroyed) await this.ep.transcribeStop().catch(() => undefined);
    else await new Promise((r) => setTimeout(r, 1500)); // a hangup still delivers the last segments (recogniser drain)
    this.detach();
    await this.writes;
    await this.speech.close();
    await finishTranscribe(this.deps, this.row.id);
  }
}

/**
 * Live transcription of a conference hosted on this node: one recogniser on the whole mix (every
 * participant), so its segments are direction `in`. Ends on stop or when the conference ends.
 */
export class MixTranscription {
  private writes: Promise<unknown> = Promise.resolve();
  private ended = false;

  private readonly speech: SpeechEvents;

  private constructor(
    readonly row: TranscribeRow,
    private readonly t: Transcriber,
    private readonly deps: SpeechDeps,
  ) {
    this.speech = new SpeechEvents(row, deps.events, deps.logger);
  }

  static async start(row: TranscribeRow, conf: Conference, deps: SpeechDeps, phrases?: string[]): Promise<MixTranscription> {
    const t = new Transcriber({ language: row.language, direction: 'in', provider: row.provider || undefined, phrases: phrases?.length ? phrases : undefined });
    const mt = new MixTranscription(row, t, deps);
    t.on('transcript', (x: Transcript) => {
      mt.speech.onResult({ ...x, direction: 'in' });
      if (!x.final || !x.text.trim()) return;
      mt.writes = mt.writes
        .then(() => storeSegment(deps, row, { text: x.text, direction: 'in', offsetMs: x.offsetMs, confidence: x.confidence }))
        .catch((err: Error) => deps.logger.warn({ err: err.message, transcribe: row.id }, 'transcript not stored'));
    });
    t.on('error', (e: Error) => deps.logger.warn({ err: e.message, transcribe: row.id }, 'transcription error'));
    await t.start((o) => conf.forkAudioStart(o));
    conf.once('destroy', () => void mt.stop());
    await publishResourceEvent(deps.events, 'transcribe_progressing', transcribeJson(row)).catch(() => undefined);
    return mt;
  }

  async stop(): Promise<void> {
    if (this.ended) return this.writes.then(() => undefined);
    this.ended = true;
    await this.t.stop().catch(() => undefined);
    await this.writes;
    await this.speech.close();
    await finishTranscribe(this.deps, this.row.id);
  }
}
