/**
 * The one way mail leaves the platform (customer emails with attachments, and the account mails of
 * mailer.ts): SMTP_URL → nodemailer's SMTP transport; none → an .eml file per mail in the outbox folder. The answer classifies the
 * outcome for the email status: accepted, refused for good (5xx), or to retry (4xx, no connection).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';

export interface EmailAttachmentFile {
  filename: string;
  path: string;
  contentType?: string;
}

export interface EmailEnvelope {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html?: string;
  attachments: EmailAttachmentFile[];
  /** Message-ID header value without brackets' content rules; also our provider reference. */
  messageId: string;
}

export type EmailOutcome = { kind: 'accepted'; response: string } | { kind: 'rejected' | 'deferred'; error: string };

export interface EmailTransport {
  send(mail: EmailEnvelope): Promise<EmailOutcome>;
  close(): void;
}

function classify(err: unknown): EmailOutcome {
  const e = err as { responseCode?: number; message?: string };
  const error = String(e.message ?? err).slice(0, 500);
  return typeof e.responseCode === 'number' && e.responseCode >= 500 ? { kind: 'rejected', error } : { kind: 'deferred', error };
}

export function smtpTransport(url: string): EmailTransport {
  const t = nodemailer.createTransport(url);
  return {
    async send(mail) {
      try {
        const info = await t.sendMail({ ...mail, messageId: `<${mail.messageId}>` });
        if (info.rejected.length > 0 && info.accepted.length === 0) return { kind: 'rejected', error: `rejected: ${info.rejected.join(', ')}` };
        return { kind: 'accepted', response: info.response };
      } catch (err) {
        return classify(err);
      }
    },
    close: () => t.close(),
  };
}

/** Writes `<base>.eml` whole or not at all (a reader polling for .eml never sees half a message). */
export async function writeEml(base: string, message: Buffer): Promise<void> {
  await fs.mkdir(path.dirname(base), { recursive: true });
  await fs.writeFile(`${base}.eml.tmp`, message);
  await fs.rename(`${base}.eml.tmp`, `${base}.eml`);
}

/** Composes RFC 5322 messages without sending them (the outbox). */
export function composer(): Transporter {
  return nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
}

export function outboxTransport(dir: string): EmailTransport {
  const compose = composer();
  return {
    async send(mail) {
      try {
        const info = await compose.sendMail({ ...mail, messageId: `<${mail.messageId}>` });
        const base = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-email-${mail.messageId.replace(/[^A-Za-z0-9.-]/g, '_')}`);
        await writeEml(base, info.message as Buffer);
        return { kind: 'accepted', response: 'written to outbox' };
      } catch (err) {
        return classify(err);
      }
    },
    close: () => undefined,
  };
}

export function emailTransport(opts: { smtpUrl?: string; outboxDir: string }): EmailTransport {
  return opts.smtpUrl ? smtpTransport(opts.smtpUrl) : outboxTransport(opts.outboxDir);
}
