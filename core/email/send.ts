/**
 * Emails: validate, then in one transaction write the email (status initiated), its conversation
 * threads and the charge (402 leaves nothing behind); after the commit hand it to the transport.
 * Status: initiated → processed (the SMTP server accepted it) | dropped (refused, 5xx) |
 * deferred (4xx or unreachable; not retried yet). Attachments of reference_type recording attach
 * the recording's files from the recordings folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ApiError, invalidArgument } from '../errors';
import { inTransaction, charge } from '../billing';
import { rates } from '../billing/rates';
import { emailJson, emailsRepo, type EmailAttachment, type EmailRow } from '../repos/emails';
import type { Address } from '../repos/messages';
import { conversationMessageJson, conversationsRepo } from '../repos/conversations';
import { mirroredMessages, threadEmail } from '../conversations/threads';
import { publishThreads } from '../messaging/send';
import type { MessagingDeps } from '../messaging/deps';
import type { EmailAttachmentFile, EmailTransport } from '../smtp/transport';

export interface EmailDeps extends MessagingDeps {
  transport: EmailTransport;
  /** The From address (MAIL_FROM). */
  from: string;
  /** Where recording files live: <recordingsDir>/<filename>. */
  recordingsDir: string;
}

export interface SendEmailInput {
  destinations: Address[];
  subject: string;
  content: string;
  attachments: { reference_type?: string; reference_id?: string }[];
  activeflowId?: string;
}

export const MAX_EMAIL_DESTINATIONS = 50;
const EMAIL_RE = /^[^\s@<>(),;:"[\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function isEmailAddress(s: string): boolean {
  return s.length <= 254 && EMAIL_RE.test(s);
}

function checkInput(input: SendEmailInput): void {
  if (input.destinations.length === 0) throw invalidArgument('destinations: at least one is required', [{ field: 'destinations', issue: 'required' }]);
  if (input.destinations.length > MAX_EMAIL_DESTINATIONS) throw invalidArgument(`destinations: at most ${MAX_EMAIL_DESTINATIONS}`, [{ field: 'destinations', issue: 'too many' }]);
  input.destinations.forEach((d, i) => {
    if (d.type !== 'email' || !isEmailAddress(d.target)) {
      throw invalidArgument(`destinations[${i}]: must be an email address`, [{ field: `destinations.${i}.target`, issue: 'email address required' }]);
    }
  });
  if (/[\r\n]/.test(input.subject)) throw invalidArgument('subject: must be one line', [{ field: 'subject', issue: 'line break' }]);
}

/** The files of each attachment; 400/404 for what cannot be attached. */
async function resolveAttachments(deps: EmailDeps, customerId: string, list: SendEmailInput['attachments']): Promise<{ refs: EmailAttachment[]; files: EmailAttachmentFile[] }> {
  const refs: EmailAttachment[] = [];
  const files: EmailAttachmentFile[] = [];
  for (const [i, a] of list.entries()) {
    const type = a.reference_type ?? '';
    if (type !== 'recording') throw invalidArgument(`attachments[${i}].reference_type: must be recording`, [{ field: `attachments.${i}.reference_type`, issue: 'must be recording' }]);
    const rec = (await deps.db('recordings').where({ id: a.reference_id, customer_id: customerId }).whereNull('tm_delete').first()) as { id: string; status: string; filenames: string[] } | undefined;
    if (!rec) throw new ApiError('RECORDING_NOT_FOUND', `attachments[${i}]: recording not found`);
    if (rec.status !== 'ended' || rec.filenames.length === 0) {
      throw invalidArgument(`attachments[${i}]: the recording has no finished file yet`, [{ field: `attachments.${i}.reference_id`, issue: 'recording not ended' }]);
    }
    for (const name of rec.filenames) {
      const p = path.join(deps.recordingsDir, path.basename(name));
      if (!fs.existsSync(p)) throw invalidArgument(`attachments[${i}]: recording file ${path.basename(name)} is missing`, [{ field: `attachments.${i}.reference_id`, issue: 'file missing' }]);
      files.push({ filename: path.basename(name), path: p, contentType: name.endsWith('.wav') ? 'audio/wav' : undefined });
    }
    refs.push({ reference_type: 'recording', reference_id: rec.id });
  }
  return { refs, files };
}

export async function sendEmail(deps: EmailDeps, customerId: string, input: SendEmailInput): Promise<EmailRow> {
  checkInput(input);
  const { refs, files } = await resolveAttachments(deps, customerId, input.attachments);
  const destinations = input.destinations.map((d) => ({ type: 'email', target: d.target, ...(d.target_name ? { target_name: d.target_name } : {}), ...(d.name ? { name: d.name } : {}) }));
  const rate = rates().email;
  const { email, threads } = await inTransaction(deps.db, async (trx) => {
    const email = await emailsRepo(trx).create({
      customer_id: customerId,
      activeflow_id: input.activeflowId,
      source: { type: 'email', target: deps.from },
      destinations,
      subject: input.subject,
      content: input.content,
      attachments: refs,
    });
    const threads = await threadEmail(trx, email);
    await charge(trx, {
      customerId,
      amount: rate * destinations.length,
      costType: 'email',
      referenceType: 'email',
      referenceId: email.id,
      idempotencyKey: `email:${email.id}`,
      billableUnits: destinations.length,
      ratePerUnit: rate,
    });
    return { email, threads };
  });
  await deps.publish('email_created', emailJson(email));
  await publishThreads(deps, threads);
  const delivery = deliver(deps, email, files);
  deps.onDelivered?.(delivery);
  return email;
}

async function deliver(deps: EmailDeps, email: EmailRow, files: EmailAttachmentFile[]): Promise<void> {
  const messageId = `${email.id}@${deps.from.split('@')[1] ?? 'localhost'}`;
  const outcome = await deps.transport.send({
    from: deps.from,
    to: email.destinations.map((d) => d.target),
    subject: email.subject,
    text: email.content,
    attachments: files,
    messageId,
  });
  try {
    const status = outcome.kind === 'accepted' ? 'processed' : outcome.kind === 'rejected' ? 'dropped' : 'deferred';
    const moved = await emailsRepo(deps.db).move(email.id, ['initiated', 'deferred'], {
      status,
      provider_ref: messageId,
      error: outcome.kind === 'accepted' ? '' : outcome.error,
    });
    if (!moved) return;
    await deps.publish('email_updated', emailJson(moved));
    const conv = status === 'processed' ? 'done' : status === 'dropped' ? 'failed' : null;
    if (!conv) return;
    for (const cm of await mirroredMessages(deps.db, email.id)) {
      const updated = await conversationsRepo(deps.db).setMessageStatus(cm.id, conv);
      if (updated) await deps.publish('conversation_message_updated', conversationMessageJson(updated));
    }
  } catch (err) {
    deps.log?.warn({ err, email_id: email.id }, 'email status update failed');
  }
}
