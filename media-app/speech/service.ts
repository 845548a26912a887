/**
 * The speech subsystem of a node: speaking sessions and live transcriptions of the calls it owns,
 * recording transcriptions, and what flow actions reach through `ctx.services.speech`.
 */
import type { CallFactory } from '../call/factory';
import type { CallSession } from '../call/session';
import { EMPTY_UUID } from '../../core/ids';
import { speakingsRepo, type SpeakingRow } from '../../core/repos/speakings';
import { transcribesRepo, transcribeJson, type TranscribeRow } from '../../core/repos/transcribes';
import { publishResourceEvent } from '../../core/events/catalogue';
import { checkStt } from '../../core/speech/providers';
import { talkVoiceFor } from '../../core/speech/talk-voices';
import { recordingsReadRepo } from '../../core/repos/recordings';
import { callsRepo } from '../../core/repos/calls';
import type { CallEndpoint } from '../media-server/endpoint';
import type { Conference } from '../../media-engine';
import { SpeakingSession, type Forkable } from './speaking';
import { finishTranscribe, LiveTranscription, MixTranscription, type SpeechDeps } from './transcription';
import { transcribeRecording } from './recording';
import { transcriptsOf } from '../../core/repos/transcripts';
import { SpeechListener, type ListenOptions } from './gather';
import { CommandBus } from '../../core/commands/bus';
import { startSummaryFlow } from '../../core/speech/summary-flow';
import type { SummaryRow } from '../../core/repos/summaries';
import { EgressPolicy } from '../../core/net';

export interface TranscribeRequest {
  language?: string;
  provider?: string;
  direction?: 'in' | 'out' | 'both';
  on_end_flow_id?: string;
  activeflow_id?: string;
}

export class SpeechService {
  private readonly speakings = new Map<string, SpeakingSession>();
  /** says that arrived before their session's start command */
  private readonly early = new Map<string, Array<{ seq: number; text: string }>>();
  /** flushes that arrived before their session's start command */
  private readonly flushedUpTo = new Map<string, number>();
  private readonly transcriptions = new Map<string, LiveTranscription | MixTranscription>();
  private readonly background = new Set<Promise<unknown>>();

  private bus: CommandBus | null = null;
  private egress: EgressPolicy | null = null;

  constructor(private readonly factory: CallFactory) {}

  /** Listens for one spoken answer on a live call of this node (speech_gather); null when the call has no endpoint here. */
  async listen(callId: string, o: ListenOptions): Promise<SpeechListener | null> {
    const call = this.factory.get(callId);
    const ep = call && !call.isEnded ? call.endpoint : null;
    if (!ep) return null;
    return SpeechListener.start(ep, o);
  }

  /** A summary made here (ai_summary) is done: its on_end_flow_id runs (core/speech/summary-flow.ts). */
  async summaryDone(row: SummaryRow): Promise<void> {
    const d = this.factory.deps;
    this.bus ??= new CommandBus({ redis: d.redis, keyPrefix: d.config.redisKeyPrefix });
    await startSummaryFlow(d.db, this.bus, row).catch((err: Error) => d.logger.warn({ err: err.message, summary: row.id }, 'on_end_flow_id did not start'));
  }

  private get deps(): SpeechDeps & { dataDir: string; egress: EgressPolicy } {
    const d = this.factory.deps;
    return {
      db: d.db,
      events: d.events,
      logger: d.logger,
      dataDir: d.config.dataDir,
      egress: (this.egress ??= new EgressPolicy(d.config.egress)),
      runOnEnd: async (row) => {
        if (!row.on_end_flow_id || row.on_end_flow_id === EMPTY_UUID) return;
        await this.factory.manager.start({
          customer_id: row.customer_id,
          flow_id: row.on_end_flow_id,
          reference_type: 'transcribe',
          reference_id: row.id,
          reference_activeflow_id: row.activeflow_id,
        });
      },
    };
  }

  // ---- speakings

  /** The speaking and transcription sessions this node holds now. */
  held(): { speakings: number; transcriptions: number } {
    return { speakings: this.speakings.size, transcriptions: this.transcriptions.size };
  }

  /**
   * speaking.start: opens the session on the call this node owns, or the conference it hosts;
   * stopped at once when that is gone. The session stops when the call hangs up or the conference ends.
   */
  async startSpeaking(speakingId: string, referenceType: 'call' | 'confbridge', referenceId: string): Promise<void> {
    if (this.speakings.has(speakingId)) return;
    const repo = speakingsRepo(this.factory.deps.db);
    const row = await repo.getById(speakingId);
    if (!row || row.status === 'stopped' || this.speakings.has(speakingId)) return;
    const d = this.factory.deps;
    const voice = talkVoiceFor(d.config.talkVoices, row.provider);
    const session = new SpeakingSession(row, d.config.dataDir, voice ? { voice, vendors: d.config.voices, egress: d.egress } : null);
    this.speakings.set(speakingId, session);
    session.on('error', (err: Error) => this.factory.deps.logger.warn({ err: err.message, speaking: speakingId }, 'speaking synthesis failed'));
    const flushed = this.flushedUpTo.get(speakingId);
    if (flushed !== undefined) await session.flush(flushed);
    this.flushedUpTo.delete(speakingId);
    for (const s of this.early.get(speakingId) ?? []) session.say(s.seq, s.text);
    this.early.delete(speakingId);
    const end = () => void this.stopSpeaking(speakingId);
    let targets: Forkable[] = [];
    if (referenceType === 'call') {
      const call = this.factory.get(referenceId);
      if (call && !call.isEnded) {
        targets = this.endpointsFor(call, row);
        call.once('hangup', end);
        session.once('stopped', () => call.off('hangup', end));
      }
    } else {
      const conf = this.mixOf(referenceId, speakingId);
      if (conf && !conf.destroyed) {
        targets = [conf];
        conf.once('destroy', end);
        session.once('stopped', () => conf.off('destroy', end));
      }
    }
    if (targets.length === 0) {
      await this.stopSpeaking(speakingId);
      return;
    }
    try {
      await session.open(targets);
    } catch (err) {
      this.factory.deps.logger.warn({ err: (err as Error).message, speaking: speakingId }, 'speaking could not start');
      await this.stopSpeaking(speakingId);
      return;
    }
    if (!session.stopped) await repo.setStatus(speakingId, 'active');
  }

  /** The conference's mix on this node, if any; none on a backend without the engine's mixer (logged: the speaking then ends). */
  private mixOf(conferenceId: string, speakingId: string): Conference | undefined {
    try {
      return this.factory.services.conferences?.mixOf(conferenceId);
    } catch (err) {
      this.factory.deps.logger.warn({ err: (err as Error).message, speaking: speakingId }, 'speaking could not start');
      return undefined;
    }
  }

  /**
   * Where the speech goes: `in` toward the call's remote party (its endpoint), `out` toward the
   * local party (the calls chained to it, e.g. the other leg of a connect), `both` to all of them.
   */
  private endpointsFor(call: CallSession, row: SpeakingRow): CallEndpoint[] {
    const out: CallEndpoint[] = [];
    if (row.direction !== 'out' && call.endpoint) out.push(call.endpoint);
    if (row.direction !== 'in') {
      const ids = [...(call.row.chained_call_ids ?? []), call.row.master_call_id].filter((id) => id && id !== EMPTY_UUID);
      for (const id of ids) {
        const peer = this.factory.get(id);
        if (peer && !peer.isEnded && peer.endpoint) out.push(peer.endpoint);
      }
    }
    return out;
  }

  sayOn(speakingId: string, seq: number, text: string): void {
    const s = this.speakings.get(speakingId);
    if (s) return s.say(seq, text);
    const list = this.early.get(speakingId) ?? [];
    list.push({ seq, text });
    this.early.set(speakingId, list);
    // a say whose start never comes (session stopped first) is forgotten after a minute
    setTimeout(() => this.early.delete(speakingId), 60_000).unref();
  }

  /** speaking.flush: drops says up to `upTo`, also those that reach this node later. */
  async flushSpeaking(speakingId: string, upTo: number): Promise<void> {
    const early = this.early.get(speakingId);
    if (early)
      this.early.set(
        speakingId,
        early.filter((s) => s.seq > upTo),
      );
    const s = this.speakings.get(speakingId);
    if (s) await s.flush(upTo);
    else {
      this.flushedUpTo.set(speakingId, Math.max(upTo, this.flushedUpTo.get(speakingId) ?? 0));
      setTimeout(() => this.flushedUpTo.delete(speakingId), 60_000).unref();
    }
  }

  async stopSpeaking(speakingId: string): Promise<void> {
    this.early.delete(speakingId);
    this.flushedUpTo.delete(speakingId);
    const s = this.speakings.get(speakingId);
    this.speakings.delete(speakingId);
    await s?.stop();
    await speakingsRepo(this.factory.deps.db).setStatus(speakingId, 'stopped');
  }

  /** The live session (benchmarks and tests read its timings). */
  speaking(speakingId: string): SpeakingSession | undefined {
    return this.speakings.get(speakingId);
  }

  // ---- transcription

  /** A flow's Transcribe row (on a call or a recording), written and announced (transcribe_created). */
  private async createTranscribe(customerId: string, referenceType: 'call' | 'recording', referenceId: string, stt: ReturnType<typeof checkStt>, req: TranscribeRequest): Promise<TranscribeRow> {
    const row = await transcribesRepo(this.factory.deps.db).create({
      customer_id: customerId,
      reference_type: referenceType,
      reference_id: referenceId,
      language: stt.language,
      direction: req.direction ?? 'both',
      provider: stt.provider,
      activeflow_id: req.activeflow_id,
      on_end_flow_id: req.on_end_flow_id,
    });
    await publishResourceEvent(this.factory.deps.events, 'transcribe_created', transcribeJson(row)).catch(() => undefined);
    return row;
  }

  /** transcribe_start (flow): a new Transcribe row on the call, then recognition. */
  async transcribeCall(callId: string, customerId: string, req: TranscribeRequest): Promise<TranscribeRow> {
    const { provider, language } = checkStt(req.provider, req.language);
    if (await transcribesRepo(this.factory.deps.db).progressingOn(callId)) throw new Error('the call is already being transcribed');
    const row = await this.createTranscribe(customerId, 'call', callId, { provider, language }, req);
    await this.startTranscribe(row.id, callId, true);
    return row;
  }

  /** transcribe.start command (row written by control-api) or transcribeCall; `referenceId` is the call or conference. */
  async startTranscribe(transcribeId: string, referenceId: string, throwOnFailure = false, phrases?: string[]): Promise<void> {
    if (this.transcriptions.has(transcribeId)) return;
    const row = await transcribesRepo(this.factory.deps.db).getById(transcribeId);
    if (!row || row.status !== 'progressing') return;
    try {
      if (row.reference_type === 'confbridge') {
        const conf = this.factory.services.conferences?.mixOf(referenceId);
        if (!conf || conf.destroyed) throw new Error('the conference is not hosted here');
        const mt = await MixTranscription.start(row, conf, this.deps, phrases);
        this.transcriptions.set(transcribeId, mt);
        conf.once('destroy', () => void this.stopTranscribe(transcribeId));
        return;
      }
      const call = this.factory.get(referenceId);
      const ep = call && !call.isEnded ? call.endpoint : null;
      if (!call || !ep) throw new Error('the call has no media');
      const lt = await LiveTranscription.start(row, ep, this.deps, phrases);
      this.transcriptions.set(transcribeId, lt);
      call.once('hangup', () => void this.stopTranscribe(transcribeId));
    } catch (err) {
      this.factory.deps.logger.warn({ err: (err as Error).message, transcribe: transcribeId }, 'transcription could not start');
      await finishTranscribe(this.deps, transcribeId);
      if (throwOnFailure) throw err;
    }
  }

  async stopTranscribe(transcribeId: string): Promise<void> {
    const lt = this.transcriptions.get(transcribeId);
    this.transcriptions.delete(transcribeId);
    if (lt) await lt.stop();
    // nothing running here (never started, or this node restarted): the session is over all the same
    else await finishTranscribe(this.deps, transcribeId);
  }

  /** transcribe_stop (flow): stops the call's live transcription, if any. */
  async stopCallTranscription(callId: string): Promise<void> {
    for (const [id, lt] of this.transcriptions) if (lt.row.reference_id === callId) await this.stopTranscribe(id);
  }

  /** transcribe_recording (flow): one transcribe per recording of the call, run in the background. */
  async transcribeCallRecordings(callId: string, customerId: string, req: TranscribeRequest): Promise<TranscribeRow[]> {
    const { provider, language } = checkStt(req.provider, req.language, true);
    const call = await callsRepo(this.factory.deps.db).get(callId);
    const rows: TranscribeRow[] = [];
    for (const rid of call?.recording_ids ?? []) {
      const rec = await recordingsReadRepo(this.factory.deps.db).getById(rid);
      if (!rec || rec.customer_id !== customerId) continue;
      const row = await this.createTranscribe(customerId, 'recording', rid, { provider, language }, req);
      this.runRecording(row);
      rows.push(row);
    }
    return rows;
  }

  /**
   * Transcribes one recording now (TwiML <Record transcribe>): a Transcribe of the recording, run to
   * its end; the text is its segments in order. `ok` is false when recognition failed.
   */
  async transcribeRecordingNow(customerId: string, recordingId: string, req: TranscribeRequest): Promise<{ row: TranscribeRow; text: string; ok: boolean }> {
    const { provider, language } = checkStt(req.provider, req.language, true);
    const row = await this.createTranscribe(customerId, 'recording', recordingId, { provider, language }, req);
    const p = transcribeRecording(this.deps, row);
    const tracked = p.finally(() => this.background.delete(tracked));
    this.background.add(tracked);
    const ok = await p;
    const segments = await transcriptsOf(this.factory.deps.db, customerId, recordingId);
    const text = segments
      .filter((x) => x.transcribe_id === row.id)
      .map((x) => x.message.trim())
      .filter(Boolean)
      .join(' ');
    return { row, text, ok };
  }

  /** transcribe.recording command (row written by control-api). */
  async transcribeRecordingById(transcribeId: string): Promise<void> {
    const row = await transcribesRepo(this.factory.deps.db).getById(transcribeId);
    if (!row || row.status !== 'progressing' || row.reference_type !== 'recording') return;
    const claim = await this.factory.deps.redis.set(`${this.factory.deps.config.redisKeyPrefix}transcribe-claim:${transcribeId}`, '1', 'EX', 86_400, 'NX');
    if (claim !== 'OK') return;
    this.runRecording(row);
  }

  private runRecording(row: TranscribeRow): void {
    const p = transcribeRecording(this.deps, row).finally(() => this.background.delete(p));
    this.background.add(p);
  }

  async stop(): Promise<void> {
    await Promise.allSettled([...this.speakings.keys()].map((id) => this.stopSpeaking(id)));
    await Promise.allSettled([...this.transcriptions.keys()].map((id) => this.stopTranscribe(id)));
    await Promise.allSettled([...this.background]);
    await this.bus?.close();
    this.bus = null;
  }
}
