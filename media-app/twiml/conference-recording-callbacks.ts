/**
 * The recording status callbacks of <Conference record="record-from-start" recordingStatusCallback…>
 * (docs/twilio.md "Conference recording"), sent by the node hosting the room: `in-progress` when the
 * recording has started (if asked), then, once it has ended, `completed` (or `absent` when nothing
 * was recorded: no file or under 1 s). Twilio's conference variant: AccountSid, ConferenceSid,
 * RecordingSid, RecordingUrl, RecordingStatus, RecordingDuration (-1 while in progress),
 * RecordingChannels (1: the mix), RecordingStartTime (RFC 2822), RecordingSource (DialConference),
 * ErrorCode (0, or 16101 when absent); no CallSid. Each is signed (X-Twilio-Signature) and goes
 * through the egress policy with the retries of the other TwiML callbacks (recording-callbacks.ts).
 */
import type { Logger } from 'pino';
import type { Knex } from '../../core/db/knex';
import { DIAL_CONFERENCE_SOURCE, type TwilioRecordCallback } from '../../core/conferences/twilio-recording';
import { customersRepo } from '../../core/repos/customers';
import { recordingsReadRepo, type RecordingRow } from '../../core/repos/recordings';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { accountSid, recordingUrl, toSid } from '../../core/twilio/sids';
import type { FlowHttp } from '../kit/http';
import { sendSigned } from './recording-callbacks';

export interface ConferenceRecordingDeps {
  db: Knex;
  http: FlowHttp;
  jwtSecret: string;
  /** The platform's public base URL (RecordingUrl, as for the call recordings' callbacks). */
  publicUrl: string;
  logger: Logger;
  timeoutMs: number;
  retryMs?: number;
}

/** Twilio's RecordingStartTime: RFC 2822 in UTC. */
const rfc2822 = (d: Date | null): string => (d ? d.toUTCString().replace('GMT', '+0000') : '');

/** Sends the callbacks of one conference recording; `done` settles when the recording has ended. Never rejects. */
export async function conferenceRecordingCallbacks(d: ConferenceRecordingDeps, conferenceId: string, recordingId: string, cb: TwilioRecordCallback, done: Promise<unknown>): Promise<void> {
  try {
    const rec = await recordingsReadRepo(d.db).getById(recordingId);
    const customer = rec ? await customersRepo(d.db).get(rec.customer_id) : null;
    if (!rec || !customer) return;
    const token = twilioAuthToken(d.jwtSecret, customer.id, customer.twilio_token_generation);
    const sender = { http: d.http, timeoutMs: d.timeoutMs, retryMs: d.retryMs, twiml: { logger: d.logger }, callId: '' };
    const send = (r: RecordingRow, status: string, duration: string, errorCode: string) =>
      sendSigned(
        sender,
        token,
        cb.url,
        cb.method,
        {
          AccountSid: accountSid(r.customer_id),
          ConferenceSid: toSid('CF', conferenceId),
          RecordingSid: toSid('RE', r.id),
          RecordingUrl: recordingUrl(d.publicUrl, r.customer_id, r.id),
          RecordingStatus: status,
          RecordingDuration: duration,
          RecordingChannels: '1',
          RecordingStartTime: rfc2822(r.tm_start),
          RecordingSource: DIAL_CONFERENCE_SOURCE,
          ErrorCode: errorCode,
        },
        `conference recording ${status}`,
      );
    if (cb.events.includes('in-progress') && rec.status !== 'ended') await send(rec, 'in-progress', '-1', '0');
    await done;
    const ended = await recordingsReadRepo(d.db).getById(recordingId);
    if (!ended) return;
    const ms = ended.tm_start && ended.tm_end ? ended.tm_end.getTime() - ended.tm_start.getTime() : 0;
    const seconds = Math.max(0, Math.round(ms / 1000));
    const absent = ended.filenames.length === 0 || seconds < 1;
    const status = absent ? 'absent' : 'completed';
    if (cb.events.includes(status)) await send(ended, status, String(seconds), absent ? '16101' : '0');
  } catch (err) {
    d.logger.warn({ err: (err as Error).message, conference: conferenceId, recording: recordingId }, 'conference recording callbacks failed');
  }
}
