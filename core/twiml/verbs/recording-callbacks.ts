/**
 * recordingStatusCallback, recordingStatusCallbackMethod, recordingStatusCallbackEvent (<Record>,
 * <Dial record>) and transcribe/transcribeCallback (<Record>) → a twiml_recording action after the
 * recording starts, or nothing when none of them is set.
 */
import { RECORDING_STATUS_EVENTS } from '../../flow/options/twiml-recording';
import { schemaError } from '../errors';
import type { Attrs, Program } from '../program';

export const RECORDING_CALLBACK_ATTRS = ['recordingStatusCallback', 'recordingStatusCallbackMethod', 'recordingStatusCallbackEvent'];

type Event = (typeof RECORDING_STATUS_EVENTS)[number];

/** The twiml_recording option of a verb, or null when it asks for no callback. */
export function recordingCallbackOption(p: Program, verb: 'Record' | 'Dial', a: Attrs, recordingVariable: string): Record<string, unknown> | null {
  const url = a.str('recordingStatusCallback');
  const method = a.method('recordingStatusCallbackMethod');
  const eventsText = a.str('recordingStatusCallbackEvent');
  const events = eventsText === undefined ? undefined : eventsText.split(/[\s,]+/).filter(Boolean);
  if (events !== undefined) {
    if (!events.length || events.some((e) => !(RECORDING_STATUS_EVENTS as readonly string[]).includes(e))) {
      throw schemaError(`<${verb}> recordingStatusCallbackEvent must be ${RECORDING_STATUS_EVENTS.join(', ')} (space-separated)`);
    }
    if (verb === 'Dial' && events.includes('in-progress')) throw schemaError('<Dial> recordingStatusCallbackEvent in-progress is not supported here (completed, absent)');
  }
  const transcribeCallback = verb === 'Record' ? a.str('transcribeCallback') : undefined;
  // Twilio: a transcribeCallback asks for the transcription by itself
  const transcribe = verb === 'Record' ? (a.bool('transcribe') ?? transcribeCallback !== undefined) : false;
  if (url === undefined && !transcribe) {
    if (method !== undefined || events !== undefined) throw schemaError(`<${verb}> recordingStatusCallbackMethod and recordingStatusCallbackEvent need recordingStatusCallback`);
    return null;
  }
  const option: Record<string, unknown> = { recording_variable: recordingVariable, source: verb === 'Record' ? 'RecordVerb' : 'DialVerb' };
  if (url !== undefined) {
    option.status_callback = p.url(verb, 'recordingStatusCallback', url);
    option.status_callback_method = method ?? 'POST';
    option.status_callback_events = events ? [...new Set(events as Event[])] : ['completed'];
  } else if (method !== undefined || events !== undefined) throw schemaError(`<${verb}> recordingStatusCallbackMethod and recordingStatusCallbackEvent need recordingStatusCallback`);
  if (transcribe) {
    option.transcribe = true;
    if (transcribeCallback !== undefined) option.transcribe_callback = p.url(verb, 'transcribeCallback', transcribeCallback);
  }
  return option;
}
