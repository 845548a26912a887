/**
 * Our extension (issue 36, TwiML <Record>/<Dial record> recordingStatusCallback and <Record
 * transcribe>): twiml_recording follows one recording in the background and sends Twilio's recording
 * status callbacks and, with `transcribe`, its transcription callback.
 */
import { z } from 'zod';

const httpUrl = z.string().regex(/^(https?:\/\/|\$\{)/, 'must be an http or https URL');

export const RECORDING_STATUS_EVENTS = ['in-progress', 'completed', 'absent'] as const;

export const twiml_recording = z
  .object({
    /** The variable holding the recording's id (default svc.recording.id; a Dial's: svc.connect.recording_id); empty: none was made, nothing is sent. */
    recording_variable: z.string().min(1, 'must not be empty').optional(),
    /** Twilio's RecordingSource. */
    source: z.enum(['RecordVerb', 'DialVerb']),
    status_callback: httpUrl.optional(),
    status_callback_method: z.enum(['GET', 'POST']).optional(),
    /** Default: completed. */
    status_callback_events: z.array(z.enum(RECORDING_STATUS_EVENTS)).min(1, 'must name at least one event').optional(),
    /** Transcribe the recording once it has ended (stored as a Transcribe of the recording). */
    transcribe: z.boolean().optional(),
    /** Where the transcription is posted (POST, as Twilio's transcribeCallback); needs transcribe. */
    transcribe_callback: httpUrl.optional(),
  })
  .refine((o) => o.status_callback !== undefined || o.transcribe === true, 'must have status_callback or transcribe')
  .refine((o) => o.transcribe_callback === undefined || o.transcribe === true, { message: 'needs transcribe', path: ['transcribe_callback'] });

/**
 * Our extension (TwiML <Conference record="record-from-start">): conference_join's `record`. The room is
 * recorded from its start (one recording per room, the first participant's settings that ask for it);
 * `status_callback` gets Twilio's recording status callbacks of the conference variant.
 */
export const conferenceRecord = z.object({
  status_callback: z
    .object({
      url: z.string().regex(/^https?:\/\//, 'must be an http or https URL'),
      method: z.enum(['GET', 'POST']),
      events: z.array(z.enum(RECORDING_STATUS_EVENTS)).min(1, 'must name at least one event'),
    })
    .optional(),
});
