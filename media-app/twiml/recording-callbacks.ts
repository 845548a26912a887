/**
 * A recording's Twilio callbacks (twiml_recording, docs/twilio.md "Recording callbacks"), run in the
 * background so the call goes on: `in-progress` at once (if asked and the recording still runs),
 * then, when it has ended, `completed` (or `absent` when nothing was recorded) with RecordingSid,
 * RecordingUrl, RecordingStatus, RecordingDuration, RecordingChannels, RecordingSource,
 * RecordingStartTime; with `transcribe` the recording is transcribed (a Transcribe of the recording)
 * and the transcribeCallback gets TranscriptionSid, TranscriptionText, TranscriptionStatus,
 * TranscriptionUrl. Each is signed with X-Twilio-Signature and goes through the flow's HTTP client
 * (the egress policy); a 5xx or transport failure is retried twice (1 s, 2 s), then given up and
 * logged, as the call status callbacks are; a refused target or a 4xx is not retried.
 */
import type { z } from 'zod';
import type { twiml_recording } from '../../core/flow/options/twiml-recording';
import { signedWebhook } from '../../core/twilio/signature';
import { accountSid, callSid, toSid } from '../../core/twilio/sids';
import { FlowHttpError, type FlowHttp } from '../kit/http';
import type { SpeechService } from '../speech';
import type { RecordingFacts, TwimlService } from './service';

type Option = z.infer<typeof twiml_recording>;

export interface RecordingJob {
  http: FlowHttp;
  twiml: TwimlService;
  speech: SpeechService | undefined;
  customerId: string;
  callId: string;
  recordingId: string;
  option: Option;
  timeoutMs: number;
  /** How long to wait for the recording to end (its maximum length and some). */
  waitMs: number;
  /** Poll interval while waiting for the end (ms). */
  pollMs?: number;
  /** First retry delay, doubled once (ms). */
  retryMs?: number;
}

/** The result of one callback: sent (2xx), or why not. */
export type Delivery = { ok: true; status: number } | { ok: false; reason: string };

/** Twilio's RecordingStartTime: RFC 2822 in UTC. */
function rfc2822(d: Date | null): string {
  return d ? d.toUTCString().replace('GMT', '+0000') : '';
}

export async function runRecordingJob(j: RecordingJob): Promise<void> {
  const o = j.option;
  const token = await j.twiml.authToken(j.customerId);
  if (!token) return;
  const send = (url: string, method: 'GET' | 'POST', params: Record<string, string>, what: string) => sendSigned(j, token, url, method, params, what);
  const events = o.status_callback_events ?? ['completed'];
  const method = o.status_callback_method ?? 'POST';
  let facts = await j.twiml.recording(j.customerId, j.recordingId);
  if (!facts) return;
  const base = (f: RecordingFacts) => ({
    AccountSid: accountSid(j.customerId),
    CallSid: callSid(j.callId),
    RecordingSid: toSid('RE', f.id),
    RecordingUrl: f.url,
    RecordingChannels: '1',
    RecordingSource: o.source,
    RecordingStartTime: rfc2822(f.startedAt),
  });
  if (o.status_callback && events.includes('in-progress') && !facts.ended) {
    await send(o.status_callback, method, { ...base(facts), RecordingStatus: 'in-progress', RecordingDuration: '-1' }, 'recording in-progress');
  }
  facts = await endOf(j, facts);
  if (!facts) return;
  const absent = facts.files === 0 || facts.durationSec < 1;
  const status = absent ? 'absent' : 'completed';
  if (o.status_callback && events.includes(status)) {
    const p: Record<string, string> = { ...base(facts), RecordingStatus: status, RecordingDuration: String(facts.durationSec) };
    if (absent) p.ErrorCode = '16101';
    await send(o.status_callback, method, p, `recording ${status}`);
  }
  if (!o.transcribe) return;
  const t = await transcribe(j, facts, absent);
  if (o.transcribe_callback) await send(o.transcribe_callback, 'POST', { ...base(facts), ...t }, 'transcription');
}

/** Waits until the recording has ended (null: it went away or did not end within waitMs). */
async function endOf(j: RecordingJob, facts: RecordingFacts): Promise<RecordingFacts | null> {
  const deadline = Date.now() + j.waitMs;
  let f: RecordingFacts | null = facts;
  while (f && !f.ended) {
    if (Date.now() > deadline) {
      j.twiml.logger.warn({ recording: facts.id }, 'twiml recording callbacks: the recording did not end; no completed callback');
      return null;
    }
    await new Promise((r) => setTimeout(r, j.pollMs ?? 250));
    f = await j.twiml.recording(j.customerId, facts.id);
  }
  return f;
}

async function transcribe(j: RecordingJob, f: RecordingFacts, absent: boolean): Promise<Record<string, string>> {
  const failed = (sid = '') => ({ TranscriptionSid: sid, TranscriptionText: '', TranscriptionStatus: 'failed', TranscriptionUrl: '' });
  if (!j.speech) {
    j.twiml.logger.warn({ recording: f.id }, 'twiml transcribe: the speech subsystem is not running here');
    return failed();
  }
  if (absent) return failed();
  const r = await j.speech.transcribeRecordingNow(j.customerId, f.id, {}).catch((e: Error) => {
    j.twiml.logger.warn({ recording: f.id, err: e.message }, 'twiml transcribe failed');
    return null;
  });
  if (!r) return failed();
  const sid = toSid('TR', r.row.id);
  if (!r.ok) return failed(sid);
  return { TranscriptionSid: sid, TranscriptionText: r.text, TranscriptionStatus: 'completed', TranscriptionUrl: `${j.twiml.publicUrl}/v1.0/transcribes/${r.row.id}` };
}

/** One signed callback with its retries; never throws (the call goes on), logs what failed. */
/** What a signed callback needs of its job (a recording's, or a conference's status callbacks). */
export type SignedSender = Pick<RecordingJob, 'http' | 'timeoutMs' | 'retryMs'> & { twiml: Pick<TwimlService, 'logger'>; callId: string };

export async function sendSigned(j: SignedSender, token: string, target: string, method: 'GET' | 'POST', params: Record<string, string>, what: string): Promise<Delivery> {
  const { url, body, signature } = signedWebhook(token, method, target, params);
  const headers: Record<string, string> = { 'user-agent': 'openvoice-twiml/1.0', 'x-twilio-signature': signature };
  if (method === 'POST') headers['content-type'] = 'application/x-www-form-urlencoded';
  let last: Delivery = { ok: false, reason: 'not sent' };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, (j.retryMs ?? 1000) * 2 ** (attempt - 1)));
    try {
      const res = await j.http.request({
        method,
        url,
        headers,
        body,
        timeoutMs: j.timeoutMs,
        maxBytes: 64 * 1024,
        signal: AbortSignal.timeout(j.timeoutMs + 1000),
      });
      if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
      last = { ok: false, reason: `HTTP ${res.status}` };
      if (res.status < 500) break;
    } catch (e) {
      last = { ok: false, reason: e instanceof FlowHttpError ? e.message : (e as Error).message };
      if (e instanceof FlowHttpError && e.refused) break;
    }
  }
  if (!last.ok) j.twiml.logger.warn({ what, host: hostOf(target), reason: last.reason, call: j.callId }, 'twiml callback not delivered');
  return last;
}

function hostOf(u: string): string {
  try {
    return new URL(u).host;
  } catch {
    return '';
  }
}
