/**
 * Conference events. conference_* go to customers (the catalogue); conferencecall_* are voipbin's
 * internal participant events, published on the same stream under the conferencecall topic so a
 * subscriber can follow who joins and leaves. Recording events carry the Recording JSON.
 */
import type { EventPublisher } from '../events/bus';
import { publishResourceEvent } from '../events/catalogue';
import { conferenceJson, type ConferenceRow } from '../repos/conferences';
import { conferencecallJson, type ConferencecallRow } from '../repos/conferencecalls';
import { recordingJson, type RecordingRow } from '../repos/recordings';

export type ConferenceEventType = 'conference_created' | 'conference_updated' | 'conference_deleted';

export async function publishConference(p: EventPublisher, type: ConferenceEventType, row: ConferenceRow): Promise<void> {
  await publishResourceEvent(p, type, conferenceJson(row));
}

export async function publishConferencecall(p: EventPublisher, row: ConferencecallRow): Promise<void> {
  await p.publish(`conferencecall_${row.status}`, row.customer_id, row.id, conferencecallJson(row));
}

export async function publishRecording(p: EventPublisher, type: 'recording_started' | 'recording_finished', row: RecordingRow): Promise<void> {
  await publishResourceEvent(p, type, recordingJson(row));
}
