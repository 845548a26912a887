export { createMailer, OutboxMailer } from './mailer';
export type { Mailer, MailerOptions, OutgoingMail } from './mailer';
export { verificationMail, welcomeMail, passwordResetMail, unregisterMail } from './templates';
