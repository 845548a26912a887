/**
 * Call recordings: a recordings row (initiating → recording → stopping → ended) and a WAV file under
 * DATA_DIR/recordings, written by the endpoint's recorder. One active recording per call.
 */
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { clock } from '../../core/clock';
import { EMPTY_UUID, newId } from '../../core/ids';
import { callsRepo } from '../../core/repos/calls';
import { retryWrite } from '../../core/db/retry';
import type { RecordingEnded, RecordingRequest } from '../flow/call-port';
import type { CallDeps } from './deps';
import { publishRecording } from '../../core/conferences/events';
import type { RecordResult } from '../../media-engine';
import type { CallEndpoint } from '../media-server/endpoint';
import type { CallRow } from '../../core/repos/calls';
import { recordingsWriteRepo } from '../../core/repos/recordings';
import { traceRecord } from '../kit/media-trace';
import { recordingsDir } from '../../core/data-dirs';

/** What a recording needs of its call (the CallSession, which stops it when it closes). */
export interface RecordedCall {
  readonly id: string;
  readonly row: CallRow;
  readonly endpoint: CallEndpoint | null;
  /** Takes the fields the recording wrote to the call's row and publishes call_updated. */
  updated(fields: Partial<Omit<CallRow, 'status'>>): Promise<void>;
}

const recordingFields = (row: CallRow | null) => (row ? { recording_id: row.recording_id, recording_ids: row.recording_ids, tm_update: row.tm_update } : null);

export interface RecordingsEvents {
  recording_ended: [ev: RecordingEnded];
}

/** How many ended recordings a call remembers the end of (a flow asks right after the end). */
const ENDINGS_KEPT = 8;

/** Twilio's Digits of a recording's end: the key that ended it, `hangup`, or none. */
export function endingDigits(r: Pick<RecordResult, 'reason' | 'terminatorUsed'> | null): string | undefined {
  if (r?.reason === 'end_of_key' && r.terminatorUsed) return r.terminatorUsed;
  if (r?.reason === 'hangup') return 'hangup';
  return undefined;
}

export class Recordings extends EventEmitter<RecordingsEvents> {
  private active: { id: string; done: Promise<unknown> } | null = null;
  private readonly endings = new Map<string, RecordingEnded>();

  constructor(
    private readonly deps: CallDeps,
    private readonly call: RecordedCall,
  ) {
    super();
  }

  private starting: Promise<{ recording_id: string }> | null = null;

  /**
   * Starts recording; with `id` (a recording_start command) the row may already exist. While one
   * is starting or running, another start (a redelivered command) returns it.
   */
  start(req: RecordingRequest & { on_end_flow_id?: string }, id = newId()): Promise<{ recording_id: string }> {
    if (this.active) return Promise.resolve({ recording_id: this.active.id });
    this.starting ??= this.begin(req, id).finally(() => (this.starting = null));
    return this.starting;
  }

  private async begin(req: RecordingRequest & { on_end_flow_id?: string }, id: string): Promise<{ recording_id: string }> {
    const ep = this.call.endpoint;
    if (!ep) throw new Error('call has no media');
    const dir = recordingsDir(this.deps.config.dataDir);
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${id}.wav`);
    const db = this.deps.db;
    const now = clock.now();
    await recordingsWriteRepo(db).startCall(
      {
        id,
        customer_id: this.call.row.customer_id,
        activeflow_id: this.call.row.activeflow_id || EMPTY_UUID,
        reference_id: this.call.id,
        on_end_flow_id: req.on_end_flow_id || EMPTY_UUID,
        options: req,
        filenames: [path.basename(file)],
      },
      now,
    );
    const changed = recordingFields(await callsRepo(db).setRecording(this.call.id, id, true));
    await this.published('recording_started', id);
    if (changed) await this.call.updated(changed);
    const span = traceRecord(id);
    const done = ep
      .record(file, { end_of_silence: req.end_of_silence, end_of_key: req.end_of_key === 'none' ? '' : req.end_of_key === 'any' ? '0123456789*#' : req.end_of_key, duration: req.duration })
      .then(
        (r) => {
          span.end(r);
          return r;
        },
        (err: unknown) => {
          span.end(null, err);
          return null;
        },
      )
      .then((r) => this.ended(id, endingDigits(r)));
    this.active = { id, done };
    return { recording_id: id };
  }

  private async ended(id: string, digits: string | undefined): Promise<void> {
    if (this.active?.id === id) this.active = null;
    // known before the row says ended: whoever sees the row ended finds how here
    const ending: RecordingEnded = digits === undefined ? { recording_id: id } : { recording_id: id, digits };
    this.endings.set(id, ending);
    for (const old of this.endings.keys()) if (this.endings.size > ENDINGS_KEPT) this.endings.delete(old);
    const now = clock.now();
    // both writes set fixed values: retried through a short database outage
    const log = this.deps.logger;
    await retryWrite(log, `recording ${id} ended`, () => recordingsWriteRepo(this.deps.db).end(id, now)).catch(() => undefined);
    const row = await retryWrite(log, `call ${this.call.id} recording`, () => callsRepo(this.deps.db).setRecording(this.call.id, id, false)).catch(() => null);
    await this.published('recording_finished', id);
    const changed = recordingFields(row);
    if (changed) await this.call.updated(changed);
    this.emit('recording_ended', ending);
  }

  /** How recording `id` ended, once it has; undefined before (or long after: the last few are kept). */
  endedHow(id: string): RecordingEnded | undefined {
    return this.endings.get(id);
  }

  /** recording_started / recording_finished with the row as written (ended() runs once per recording). */
  private async published(type: 'recording_started' | 'recording_finished', id: string): Promise<void> {
    const row = await recordingsWriteRepo(this.deps.db)
      .getAny(id)
      .catch(() => undefined);
    if (row) await publishRecording(this.deps.events, type, row).catch((err: Error) => this.deps.logger.warn({ err: err.message, recording: id, type }, 'event publish failed'));
  }

  /** Stops the active recording (idempotent); resolves when its row says ended. */
  async stop(): Promise<void> {
    await this.starting?.catch(() => undefined);
    const a = this.active;
    if (!a) return;
    await recordingsWriteRepo(this.deps.db)
      .markStopping(a.id, clock.now())
      .catch(() => undefined);
    await this.call.endpoint?.stopRecord().catch(() => undefined);
    await a.done;
  }

  get activeId(): string | null {
    return this.active?.id ?? null;
  }
}
