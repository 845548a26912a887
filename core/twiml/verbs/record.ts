/**
 * <Record>: recording_start (beep unless playBeep="false", silence `timeout`, `finishOnKey`,
 * `maxLength`), then, when the recording has ended, the `action` URL (default: the document's own)
 * is fetched with RecordingSid, RecordingUrl, RecordingDuration and Digits, and its TwiML replaces
 * the rest. finishOnKey: one key, or any key for the default set (several keys but not all: any
 * key). trim is accepted with no effect. recordingStatusCallback* and transcribe/transcribeCallback:
 * a twiml_recording action after the recording_start (recording-callbacks.ts).
 */
import { schemaError } from '../errors';
import { childElements, textOf, type TwimlElement } from '../parse';
import { Attrs, TWIML_VARS, type Program } from '../program';
import { RECORDING_CALLBACK_ATTRS, recordingCallbackOption } from './recording-callbacks';

const ATTRS = ['action', 'method', 'timeout', 'maxLength', 'finishOnKey', 'playBeep', 'trim', 'transcribe', 'transcribeCallback', ...RECORDING_CALLBACK_ATTRS];

export function compileRecord(p: Program, el: TwimlElement): void {
  const a = new Attrs(el, ATTRS);
  if (textOf(el) || childElements(el).length) throw schemaError('<Record> takes no content');
  const callbacks = recordingCallbackOption(p, 'Record', a, 'svc.recording.id');
  a.oneOf('trim', ['trim-silence', 'do-not-trim'] as const);
  const keys = a.str('finishOnKey') ?? '1234567890*#';
  if (!/^[0-9#*]*$/.test(keys)) throw schemaError('<Record> finishOnKey must be keys from 0-9, #, *');
  const endOfKey = keys === '' ? 'none' : keys.length === 1 ? keys : 'any';
  p.add('recording_start', {
    format: 'wav',
    end_of_silence: a.int('timeout', 0, 3600) ?? 5,
    end_of_key: endOfKey,
    duration: a.int('maxLength', 1, 14400) ?? 3600,
    beep_start: a.bool('playBeep') ?? true,
  });
  if (callbacks) p.add('twiml_recording', callbacks);
  const action = a.str('action');
  const url = action !== undefined ? p.url('Record', 'action', action) : p.opts.documentUrl;
  if (!url) return;
  p.add('variable_set', { key: TWIML_VARS.waitRecording, value: '${svc.recording.id}' });
  p.add('twiml', { url, method: a.method() ?? 'POST' });
}
