/**
 * What follows a new message: the MWI notice (core/voicemail/mwi.ts), the voicemail_message_created
 * event, the mail with the audio attached (core/email: recorded, charged, delivered through SMTP or
 * the outbox; delete_after_email removes the message once the SMTP server took it), and the
 * transcript through the platform's STT (the transcribe_recording path) when speech runs here,
 * then, for a box with `ai_summary`, the summary of the transcript by the platform's LLM
 * (core/voicemail/summary.ts). A box with ai_summary and an email mails once the summary step is
 * over (the mail carries the transcript and the summary); other boxes mail at once.
 */
import { publishResourceEvent } from '../../core/events/catalogue';
import { sendEmail } from '../../core/email/send';
import { emailsRepo } from '../../core/repos/emails';
import { recordingsReadRepo } from '../../core/repos/recordings';
import { transcribesRepo } from '../../core/repos/transcribes';
import { transcriptsOf } from '../../core/repos/transcripts';
import type { VoicemailBoxRow } from '../../core/voicemail/boxes';
import { voicemailMessageJson, voicemailMessagesRepo, type VoicemailMessageRow } from '../../core/voicemail/messages';
import { publishMwiChange } from '../../core/voicemail/mwi';
import { summarizeVoicemail } from '../../core/voicemail/summary';
import type { VoicemailDeps } from './service';

/** One line without control characters (a caller id is customer input). */
const oneLine = (s: string, max = 120): string => s.replace(/[\p{Cc}\p{Cf}]+/gu, ' ').slice(0, max);

export async function messageChanged(
  svc: VoicemailDeps,
  box: VoicemailBoxRow,
  type: 'voicemail_message_created' | 'voicemail_message_updated' | 'voicemail_message_deleted',
  m: VoicemailMessageRow,
): Promise<void> {
  await publishMwiChange(svc.db, svc.redis, svc.config.redisKeyPrefix, box);
  await publishResourceEvent(svc.events, type, voicemailMessageJson(m)).catch((err: Error) => svc.logger.warn({ err: err.message, type }, 'event publish failed'));
}

export async function messageCreated(svc: VoicemailDeps, box: VoicemailBoxRow, m: VoicemailMessageRow): Promise<void> {
  await messageChanged(svc, box, 'voicemail_message_created', m);
  const followUp = m.recording_id && m.call_id ? transcript(svc, box, m).then((t) => (box.ai_summary ? summary(svc, box, t) : t)) : null;
  if (followUp) svc.track(followUp);
  if (box.email) svc.track(box.ai_summary && followUp ? followUp.then((latest) => mail(svc, box, latest)) : mail(svc, box, m));
}

async function mail(svc: VoicemailDeps, box: VoicemailBoxRow, m: VoicemailMessageRow): Promise<void> {
  const from = oneLine(m.caller_name ? `${m.caller_name} <${m.caller_number}>` : m.caller_number || 'unknown caller');
  const delivery: { done: Promise<void> | null } = { done: null };
  // this send's delivery is awaited here; the deps' own observer is told of it as well
  const onDelivered = (p: Promise<void>): void => {
    svc.email.onDelivered?.(p);
    delivery.done = p;
  };
  try {
    const email = await sendEmail({ ...svc.email, onDelivered }, box.customer_id, {
      destinations: [{ type: 'email', target: box.email }],
      subject: oneLine(`New voicemail from ${from} in box ${box.number}`, 200),
      content:
        `A new message (${Math.round(m.duration_ms / 1000)} s) from ${from} is in voicemail box ${box.number}${box.name ? ` (${oneLine(box.name)})` : ''}, left at ${m.tm_create.toISOString()}.\n` +
        (m.summary ? `\nSummary: ${m.summary}\n` : '') +
        (box.ai_summary && m.transcript ? `\nTranscript: ${m.transcript}\n` : ''),
      attachments: box.attach_audio && m.recording_id ? [{ reference_type: 'recording', reference_id: m.recording_id }] : [],
    });
    if (delivery.done) await delivery.done;
    if (!box.delete_after_email) return;
    const sent = await emailsRepo(svc.db).get(email.id);
    if (sent?.status !== 'processed') return;
    const gone = await voicemailMessagesRepo(svc.db).softDelete(box.customer_id, m.id);
    if (gone) await messageChanged(svc, box, 'voicemail_message_deleted', gone);
  } catch (err) {
    svc.logger.warn({ err: (err as Error).message, message: m.id }, 'voicemail mail not sent');
  }
}

const TRANSCRIBE_WAIT_MS = 120_000;

/** The message's transcript through the platform's STT; resolves with the message as it is then (never rejects). */
async function transcript(svc: VoicemailDeps, box: VoicemailBoxRow, m: VoicemailMessageRow): Promise<VoicemailMessageRow> {
  const speech = svc.speech();
  if (!speech || !m.call_id || !m.recording_id) return m;
  try {
    if (!(await recordingsReadRepo(svc.db).getById(m.recording_id))) return m;
    const rows = await speech.transcribeCallRecordings(m.call_id, box.customer_id, { language: box.language, direction: 'in' });
    const mine = rows.find((r) => r.reference_id === m.recording_id);
    if (!mine) return m;
    const deadline = Date.now() + TRANSCRIBE_WAIT_MS;
    while (Date.now() < deadline) {
      const row = await transcribesRepo(svc.db).getById(mine.id);
      if (row?.status === 'done') break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const text = (await transcriptsOf(svc.db, box.customer_id, m.recording_id))
      .filter((t) => t.transcribe_id === mine.id)
      .map((t) => t.message.trim())
      .filter(Boolean)
      .join(' ');
    if (!text) return m;
    await voicemailMessagesRepo(svc.db).setTranscript(m.id, text);
    const updated = await voicemailMessagesRepo(svc.db).get(box.customer_id, m.id);
    if (!updated) return m;
    await publishResourceEvent(svc.events, 'voicemail_message_updated', voicemailMessageJson(updated)).catch(() => undefined);
    return updated;
  } catch (err) {
    svc.logger.warn({ err: (err as Error).message, message: m.id }, 'voicemail transcript failed');
    return m;
  }
}

/**
 * The AI summary of the transcript (a box with ai_summary): written on the message with
 * voicemail_message_updated; a failure (no transcript, no LLM configured, the LLM refusing or
 * unreachable, the egress policy) writes `summary_error` instead, logs it and leaves the rest be.
 */
async function summary(svc: VoicemailDeps, box: VoicemailBoxRow, m: VoicemailMessageRow): Promise<VoicemailMessageRow> {
  try {
    const caller = oneLine(m.caller_name ? `${m.caller_name} (${m.caller_number})` : m.caller_number || 'unknown caller');
    const s = await summarizeVoicemail(m.transcript, { language: box.language, caller, egress: svc.egress });
    if (s.summary_error) svc.logger.warn({ message: m.id, box: box.id, reason: s.summary_error }, 'voicemail summary not made');
    await voicemailMessagesRepo(svc.db).setSummary(m.id, s);
    const updated = await voicemailMessagesRepo(svc.db).get(box.customer_id, m.id);
    if (!updated) return m;
    await publishResourceEvent(svc.events, 'voicemail_message_updated', voicemailMessageJson(updated)).catch(() => undefined);
    return updated;
  } catch (err) {
    svc.logger.warn({ err: (err as Error).message, message: m.id }, 'voicemail summary failed');
    return m;
  }
}
