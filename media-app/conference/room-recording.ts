/**
 * A room's one recording (media-app/conference/room.ts): the whole mix into one WAV (8 kHz, 16-bit,
 * mono), its recording row from initiated to ended, its events, the flow its on_end_flow_id names, and
 * <Conference record="record-from-start"> (core/conferences/twilio-recording.ts). The room owns it and
 * says when it may not start (the room finished) and when it stops (the room finishes, the node stops).
 */
import fs from 'node:fs';
import path from 'node:path';
import { clock } from '../../core/clock';
import { EMPTY_UUID } from '../../core/ids';
import type { RecordingOptions } from '../../core/commands/contracts';
import { conferencesRepo, type ConferenceRow } from '../../core/repos/conferences';
import { recordingsWriteRepo } from '../../core/repos/recordings';
import { publishRecording } from '../../core/conferences/events';
import { makeTwilioRecording, TWILIO_RECORDING_OPTIONS } from '../../core/conferences/twilio-recording';
import { recordingsDir } from '../../core/data-dirs';
import { ApiError } from '../../core/errors';
import type { ConferenceMix } from '../media-server/conference';
import type { RoomDeps } from './room';

/** What the recording asks of its room. */
export interface RecordingRoom {
  readonly id: string;
  readonly media: ConferenceMix;
  /** the room has finished: no recording starts */
  finished(): boolean;
  /** the room is terminating or finished: no TwiML recording is made */
  closing(): boolean;
  /** a publish that cannot fail the caller (logged) */
  publish(what: string, p: Promise<unknown>): Promise<void>;
  /** the room's row changed: kept and published */
  published(row: ConferenceRow | null): Promise<void>;
}

/** The room's one recording: claimed before its start's first await; `done` once the mix records into its file. */
interface Slot {
  readonly id: string;
  /** settles when the start has run (recording, or not: a redelivered start, a failure) */
  started: Promise<void>;
  /** settles when the recording has ended (its row, events and flow) */
  done?: Promise<void>;
}

export class RoomRecording {
  private active: Slot | null = null;

  constructor(
    private readonly room: RecordingRoom,
    private readonly d: RoomDeps,
  ) {}

  private get conferences() {
    return conferencesRepo(this.d.db);
  }

  /**
   * Starts recording the mix as `recordingId` (a redelivered start: nothing). One at a time: the slot is
   * taken before the first await, so of two starts at once the other is abandoned (its row ended) and
   * fails with RECORDING_ALREADY_ACTIVE; a start that fails frees the slot.
   */
  async start(recordingId: string, options: RecordingOptions): Promise<void> {
    if (this.active?.id === recordingId) return;
    if (this.room.finished()) return this.abandon(recordingId);
    const holder = this.active?.id;
    if (holder) {
      await this.abandon(recordingId);
      throw new ApiError('RECORDING_ALREADY_ACTIVE', `conference ${this.room.id} is already recording (${holder})`);
    }
    const slot: Slot = { id: recordingId, started: Promise.resolve() };
    this.active = slot;
    slot.started = this.begin(slot, options).catch((err: unknown) => {
      if (this.active === slot) this.active = null;
      throw err;
    });
    return slot.started;
  }

  /** The claimed slot's recording: its row recording, its event, the mix into its file. */
  private async begin(slot: Slot, options: RecordingOptions): Promise<void> {
    const recordingId = slot.id;
    const dir = recordingsDir(this.d.dataDir);
    fs.mkdirSync(dir, { recursive: true });
    const filename = `${recordingId}.wav`;
    const rec = await recordingsWriteRepo(this.d.db).startInitiated(recordingId, [filename], clock.now());
    if (!rec) {
      // a redelivered command: already started (or ended)
      if (this.active === slot) this.active = null;
      return;
    }
    await this.room.publish('recording_started', publishRecording(this.d.events, 'recording_started', rec));
    const result = this.room.media.startRecording(path.join(dir, filename), { duration: options.duration > 0 ? options.duration : undefined });
    slot.done = result.then(
      () => this.ended(recordingId, options),
      (err: Error) => {
        this.d.logger.warn({ err: err.message, conference: this.room.id }, 'conference recording failed');
        return this.ended(recordingId, options);
      },
    );
  }

  /**
   * <Conference record="record-from-start">: once someone is in the mix, the room's one recording is
   * made if it asks for one (core/conferences/twilio-recording.ts) and started here. Never throws.
   */
  async twilioRecord(): Promise<void> {
    try {
      const row = await this.conferences.get(this.room.id);
      if (!row?.twilio_record || row.twilio_record.recording_id || this.room.closing()) return;
      const made = await makeTwilioRecording(this.d.db, this.room.id);
      if (!made) return;
      await this.start(made.recordingId, TWILIO_RECORDING_OPTIONS);
      const r = this.active;
      if (r?.id === made.recordingId && r.done) this.d.twilioRecording(made.recordingId, made.record, r.done);
    } catch (err) {
      this.d.logger.warn({ err: (err as Error).message, conference: this.room.id }, 'conference recording (TwiML record) did not start');
    }
  }

  /** Stops the active recording (idempotent; one still starting once it has started); resolves when its row says ended. */
  async stop(): Promise<void> {
    const r = this.active;
    if (!r) return;
    await r.started.catch(() => undefined);
    if (!r.done) return; // it did not start
    await recordingsWriteRepo(this.d.db)
      .markStopping(r.id, clock.now())
      .catch(() => undefined);
    await this.room.media.stopRecording().catch(() => undefined);
    await r.done;
  }

  /** A recording that cannot run here: ended at once, the slot freed. */
  private async abandon(recordingId: string): Promise<void> {
    await recordingsWriteRepo(this.d.db).endUnlessEnded(recordingId, clock.now());
    await this.conferences.releaseRecording(this.room.id, recordingId);
  }

  private async ended(recordingId: string, options: RecordingOptions): Promise<void> {
    if (this.active?.id === recordingId) this.active = null;
    const rec = await recordingsWriteRepo(this.d.db).endUnlessEnded(recordingId, clock.now());
    await this.room.published(await this.conferences.releaseRecording(this.room.id, recordingId));
    if (!rec) return;
    await this.room.publish('recording_finished', publishRecording(this.d.events, 'recording_finished', rec));
    if (options.on_end_flow_id && options.on_end_flow_id !== EMPTY_UUID) {
      await this.d
        .startRecordingFlow(rec.customer_id, options.on_end_flow_id, recordingId)
        .catch((err: Error) => this.d.logger.warn({ err: err.message, recording: recordingId }, 'on_end_flow_id did not start'));
    }
  }
}
