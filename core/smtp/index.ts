export { createMailer, OutboxMailer } from './mailer';
export type { Mailer, MailerOptions, OutgoingMail } from './mailer';
export { verificationMail, welcomeMail, passwordResetMail, unregisterMail } from './templates';
export { emailTransport, smtpTransport, outboxTransport } from './transport';
export type { EmailTransport, EmailEnvelope, EmailOutcome, EmailAttachmentFile } from './transport';
