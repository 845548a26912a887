/**
 * TwiML <Conference record="record-from-start"> (issue 36, docs/twilio.md "Conference recording"):
 * the room's recording request lives on its row (`twilio_record`, the first participant's that asks
 * for one); when the room starts, the hosting node makes its one recording: the conference's active
 * recording slot is claimed and the recording row written in one transaction, with the request
 * stamped with the recording's id so that no second one is made for that room.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import type { RecordingOptions } from '../commands/contracts';
import { conferencesRepo } from '../repos/conferences';
import type { RecordingRow } from '../repos/recordings';

/** Twilio's RecordingSource of a recording made by <Conference record>. */
export const DIAL_CONFERENCE_SOURCE = 'DialConference';

export interface TwilioRecordCallback {
  url: string;
  method: 'GET' | 'POST';
  events: string[];
}

/** conferences.twilio_record: what the room's recording asks for, and the recording once made. */
export interface TwilioRecord {
  status_callback?: TwilioRecordCallback;
  recording_id?: string;
}

/** The mix into one WAV until the room ends or it is stopped (no silence or key end, no length limit). */
export const TWILIO_RECORDING_OPTIONS: RecordingOptions = { format: 'wav', end_of_silence: 0, end_of_key: '', duration: 0, on_end_flow_id: EMPTY_UUID };

/** The source a Twilio view shows for a recording row (its options say when TwiML made it). */
export function twilioSourceOf(r: Pick<RecordingRow, 'options'>): string | null {
  const s = r.options?.twilio_source;
  return typeof s === 'string' ? s : null;
}

/** Sets the room's recording request unless one is set already (the first participant's wins). */
export async function claimTwilioRecord(db: Db, conferenceId: string, record: TwilioRecord): Promise<void> {
  await db('conferences')
    .where({ id: conferenceId })
    .whereNull('twilio_record')
    .update({ twilio_record: db.raw('?::jsonb', [JSON.stringify({ ...(record.status_callback ? { status_callback: record.status_callback } : {}) })]) });
}

/**
 * The room's recording, made now if the room asks for one and has none yet: its id and request, or
 * null (nothing asked, already made, or another recording holds the room's slot: then none is made
 * and a later entry into the mix tries again).
 */
export async function makeTwilioRecording(db: Db, conferenceId: string): Promise<{ recordingId: string; record: TwilioRecord } | null> {
  const recordingId = newId();
  try {
    return await db.transaction(async (trx) => {
      const claimed = await conferencesRepo(trx).claimRecording(conferenceId, recordingId);
      if (!claimed) return null;
      const [row] = (await trx('conferences')
        .where({ id: conferenceId })
        .whereNotNull('twilio_record')
        .whereRaw(`twilio_record->>'recording_id' IS NULL`)
        .update({ twilio_record: trx.raw(`twilio_record || jsonb_build_object('recording_id', ?::text)`, [recordingId]) })
        .returning(['twilio_record'])) as { twilio_record: TwilioRecord }[];
      // nothing asked, or made already: the slot's claim is undone with the rest
      if (!row) throw new NothingToRecord();
      await trx('recordings').insert({
        id: recordingId,
        customer_id: claimed.customer_id,
        owner_id: EMPTY_UUID,
        owner_type: '',
        activeflow_id: EMPTY_UUID,
        reference_type: 'conference',
        reference_id: conferenceId,
        status: 'initiating',
        format: 'wav',
        on_end_flow_id: EMPTY_UUID,
        options: JSON.stringify({ ...TWILIO_RECORDING_OPTIONS, twilio_source: DIAL_CONFERENCE_SOURCE }),
        filenames: [],
        tm_create: clock.now(),
      });
      return { recordingId, record: row.twilio_record };
    });
  } catch (err) {
    if (err instanceof NothingToRecord) return null;
    throw err;
  }
}

/** Rolls makeTwilioRecording's transaction back when the room asks for no (further) recording. */
class NothingToRecord extends Error {}
