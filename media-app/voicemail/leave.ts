/**
 * Leaving a message (flow action `voicemail`; an extension's no-answer/busy destination runs it
 * too): the box's greeting (recorded file, else its text or the default, spoken), a beep, then the
 * caller's message recorded as a call recording (recordings row and WAV) until `#`, silence, the
 * length limit or hangup. The message keeps the recording's file with caller, time and duration.
 */
import path from 'node:path';
import { readWav } from '../../media-engine';
import { recordingsWriteRepo } from '../../core/repos/recordings';
import { voicemailBoxesRepo, type VoicemailBoxRow } from '../../core/voicemail/boxes';
import { voicemailMessagesRepo, type VoicemailMessageRow } from '../../core/voicemail/messages';
import type { CallPort } from '../flow/call-port';
import { CallAudio, speakable } from './audio';
import { messageCreated } from './notify';
import type { VoicemailDeps } from './service';
import { recordingsDir } from '../../core/data-dirs';

export interface LeaveOptions {
  boxId: string;
  greeting: 'unavailable' | 'busy' | 'none';
  beep: boolean;
  /** Seconds, capped by the box's max_message_sec. */
  maxLength?: number;
}

/** Messages shorter than this are dropped: the caller said nothing (hung up at the beep). */
export const MIN_MESSAGE_MS = 500;
/** Seconds of silence that end a message. */
export const END_OF_SILENCE_SEC = 10;

export type LeaveResult = { kind: 'left'; message: VoicemailMessageRow } | { kind: 'too_short' | 'box_full' | 'no_message' } | { kind: 'box_not_found' };

export function defaultGreeting(box: VoicemailBoxRow, kind: 'unavailable' | 'busy'): string {
  if (box.greeting_text) return speakable(box.greeting_text);
  const who = box.name ? speakable(box.name) : `mailbox ${box.number.split('').join(' ')}`;
  return kind === 'busy' ? `${who} is on the phone. Please leave a message after the tone.` : `${who} is not available. Please leave a message after the tone.`;
}

function waitRecordingEnd(call: CallPort, recordingId: string, maxMs: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      call.off('recording_ended', onEnd);
      resolve();
    };
    const onEnd = (ev: { recording_id: string }) => {
      if (ev.recording_id === recordingId) done();
    };
    const t = setTimeout(done, maxMs);
    call.on('recording_ended', onEnd);
  });
}

export async function leaveMessage(svc: VoicemailDeps, customerId: string, call: CallPort, o: LeaveOptions, signal: AbortSignal): Promise<LeaveResult> {
  const box = await voicemailBoxesRepo(svc.db).get(customerId, o.boxId);
  if (!box) return { kind: 'box_not_found' };
  const audio = new CallAudio(svc, call, box.language, null);
  const messages = voicemailMessagesRepo(svc.db);
  if ((await messages.count(box.id)) >= box.max_messages) {
    await audio.say('The mailbox is full. Goodbye.', signal);
    return { kind: 'box_full' };
  }
  if (o.greeting !== 'none') {
    const file = o.greeting === 'busy' ? box.greeting_busy : box.greeting_unavailable;
    if (file) await audio.file(file, signal);
    else await audio.say(defaultGreeting(box, o.greeting), signal);
  }
  if (o.beep) await audio.beep(signal);
  const limit = Math.min(o.maxLength ?? box.max_message_sec, box.max_message_sec);
  const { recording_id } = await call.recordingStart({ format: 'wav', end_of_silence: END_OF_SILENCE_SEC, end_of_key: '#', duration: limit, beep_start: false });
  // the recording ends on #, silence, the limit, or the caller's hangup (the call stops it as it closes)
  await waitRecordingEnd(call, recording_id, (limit + 15) * 1000);
  const rec = await recordingsWriteRepo(svc.db).getAny(recording_id);
  const filename = rec?.filenames[0];
  if (!filename) return { kind: 'no_message' };
  let durationMs = 0;
  try {
    durationMs = Math.round(readWav(path.join(recordingsDir(svc.config.dataDir), path.basename(filename))).info.durationMs);
  } catch {
    return { kind: 'no_message' };
  }
  if (durationMs < MIN_MESSAGE_MS) return { kind: 'too_short' };
  const src = call.info.source;
  const message = await messages.create({
    customer_id: customerId,
    box_id: box.id,
    caller_type: src.type ?? '',
    caller_number: src.target ?? '',
    caller_name: src.target_name ?? src.name ?? '',
    call_id: call.info.id,
    recording_id,
    filename,
    duration_ms: durationMs,
  });
  await messageCreated(svc, box, message);
  return { kind: 'left', message };
}
