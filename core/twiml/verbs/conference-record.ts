/**
 * <Conference record trim recordingStatusCallback recordingStatusCallbackMethod
 * recordingStatusCallbackEvent> → conference_join's `record` (docs/twilio.md "Conference recording"):
 * record="record-from-start" records the room from its start; do-not-record (the default) none.
 * trim (trim-silence, do-not-trim) is accepted with no effect. The callback's method defaults to
 * POST and its events to `completed` (in-progress, completed, absent); a callback without a recording
 * asks for nothing, as for <Dial record>.
 */
import { RECORDING_STATUS_EVENTS } from '../../flow/options/twiml-recording';
import { schemaError } from '../errors';
import type { Attrs, Program } from '../program';

export const CONFERENCE_RECORD_ATTRS = ['record', 'trim', 'recordingStatusCallback', 'recordingStatusCallbackMethod', 'recordingStatusCallbackEvent'];

type Event = (typeof RECORDING_STATUS_EVENTS)[number];

export interface ConferenceRecordOption {
  record?: { status_callback?: { url: string; method: 'GET' | 'POST'; events: Event[] } };
}

export function conferenceRecordOption(p: Program, c: Attrs): ConferenceRecordOption {
  const record = c.oneOf('record', ['do-not-record', 'record-from-start'] as const);
  c.oneOf('trim', ['trim-silence', 'do-not-trim'] as const);
  const url = c.str('recordingStatusCallback');
  const method = c.method('recordingStatusCallbackMethod');
  const eventsText = c.str('recordingStatusCallbackEvent');
  const events = eventsText === undefined ? undefined : eventsText.split(/[\s,]+/).filter(Boolean);
  if (events !== undefined && (!events.length || events.some((e) => !(RECORDING_STATUS_EVENTS as readonly string[]).includes(e)))) {
    throw schemaError(`<Conference> recordingStatusCallbackEvent must be ${RECORDING_STATUS_EVENTS.join(', ')} (space-separated)`);
  }
  if (url === undefined && (method !== undefined || events !== undefined)) {
    throw schemaError('<Conference> recordingStatusCallbackMethod and recordingStatusCallbackEvent need recordingStatusCallback');
  }
  const target = url === undefined ? undefined : p.url('Conference', 'recordingStatusCallback', url);
  if (record !== 'record-from-start') return {};
  if (target === undefined) return { record: {} };
  return { record: { status_callback: { url: target, method: method ?? 'POST', events: [...new Set((events ?? ['completed']) as Event[])] } } };
}
