// The Mailer: one interface, two deliveries. With SMTP_URL configured mail goes out through nodemailer's
// SMTP transport; without it (the embedded default) each mail is written to the outbox folder as an .eml
// file plus a .txt holding just the link, so a newcomer can open the verification link by hand.
import fs from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { composer, smtpTransport, writeEml, type EmailTransport } from './transport';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** The one action link of the mail (verification, reset...), also written to the outbox .txt. */
  link?: string;
  /** Template name, used in the outbox file name: verification, password-reset, welcome, unregister... */
  kind: string;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<void>;
  close(): Promise<void>;
}

export interface MailerOptions {
  smtpUrl?: string;
  from: string;
  outboxDir: string;
}

export function createMailer(opts: MailerOptions): Mailer {
  return opts.smtpUrl ? new SmtpMailer(opts.smtpUrl, opts.from) : new OutboxMailer(opts.outboxDir, opts.from);
}

class SmtpMailer implements Mailer {
  private readonly transport: EmailTransport;
  constructor(
    url: string,
    private readonly from: string,
  ) {
    this.transport = smtpTransport(url);
  }
  async send(mail: OutgoingMail): Promise<void> {
    const messageId = `${crypto.randomUUID()}@${this.from.split('@')[1]?.replace(/[>\s]/g, '') || 'localhost'}`;
    const r = await this.transport.send({ from: this.from, to: [mail.to], subject: mail.subject, text: mail.text, html: mail.html, attachments: [], messageId });
    if (r.kind !== 'accepted') throw new Error(`mail to ${mail.to} not sent: ${r.error}`);
  }
  async close(): Promise<void> {
    this.transport.close();
  }
}

let outboxSeq = 0;

/** Writes `<time>-<seq>-<kind>-<to>-<rand>.eml` (the full RFC 5322 message) and the same name with `.txt` (the link). */
export class OutboxMailer implements Mailer {
  private readonly composer = composer();
  constructor(
    readonly dir: string,
    private readonly from: string,
  ) {}

  async send(mail: OutgoingMail): Promise<void> {
    const info = await this.composer.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
    await fs.mkdir(this.dir, { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const who = mail.to.replace(/[^A-Za-z0-9@._-]/g, '_').slice(0, 80);
    // The sequence number keeps names in sending order within one millisecond.
    const seq = String(++outboxSeq % 1_000_000).padStart(6, '0');
    const base = path.join(this.dir, `${stamp}-${seq}-${mail.kind}-${who}-${crypto.randomBytes(3).toString('hex')}`);
    // Write the .txt first and the .eml last: a reader polling for .eml then finds both complete.
    await fs.writeFile(`${base}.txt`, `${mail.subject}\nTo: ${mail.to}\n\n${mail.link ?? ''}\n`);
    await writeEml(base, info.message as Buffer);
  }
  async close(): Promise<void> {}
}
