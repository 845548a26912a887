// Texts of the account mails. Links are built from PUBLIC_URL, the address the mail reader's browser reaches,
// and land in the web console (/console/verify, /console/password-reset: control-api/console/router.ts);
// GET /auth/email-verify and GET /auth/password-reset still serve their plain pages for the same tokens.
import type { OutgoingMail } from './mailer';

function url(publicUrl: string, p: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${p}?token=${encodeURIComponent(token)}`;
}

function html(text: string, link: string): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  const body = esc(text)
    .replace(esc(link), `<a href="${esc(link)}">${esc(link)}</a>`)
    .replace(/\n/g, '<br>\n');
  return `<!DOCTYPE html><html><body>${body}</body></html>`;
}

export function verificationMail(publicUrl: string, to: string, token: string, validHours: number): OutgoingMail {
  const link = url(publicUrl, '/console/verify', token);
  const text = `Welcome!\n\nOpen the link below to verify your email address (valid for ${validHours} hours):\n\n${link}\n\n` + 'If you did not create this account, you can ignore this email.';
  return { kind: 'verification', to, subject: 'Verify your email', text, html: html(text, link), link };
}

/** Sent after verification: the admin agent has no password yet, this link sets the first one. */
export function welcomeMail(publicUrl: string, to: string, token: string, validHours: number): OutgoingMail {
  const link = url(publicUrl, '/console/password-reset', token);
  const text =
    `Your email address is verified and your account is active.\n\nSet the password of your admin login (username ${to}) ` +
    `with the link below (valid for ${validHours} hour${validHours === 1 ? '' : 's'}):\n\n${link}\n\n` +
    'You can request a new link at any time with POST /auth/password-forgot.';
  return { kind: 'welcome', to, subject: 'Set your password', text, html: html(text, link), link };
}

export function passwordResetMail(publicUrl: string, to: string, token: string, validHours: number): OutgoingMail {
  const link = url(publicUrl, '/console/password-reset', token);
  const text =
    `A password reset was requested for ${to}.\n\nOpen the link below to choose a new password ` +
    `(valid for ${validHours} hour${validHours === 1 ? '' : 's'}):\n\n${link}\n\n` +
    'If you did not ask for this, you can ignore this email; your password stays unchanged.';
  return { kind: 'password-reset', to, subject: 'Reset your password', text, html: html(text, link), link };
}

export function unregisterMail(publicUrl: string, to: string, deletionEffectiveAt: Date | null): OutgoingMail {
  const base = publicUrl.replace(/\/+$/, '');
  const text = deletionEffectiveAt
    ? `Your account is scheduled for deletion on ${deletionEffectiveAt.toISOString()}.\n\n` + `Until then you can cancel with DELETE ${base}/auth/unregister (logged in with your token or access key).`
    : 'Your account and all its records have been deleted. This cannot be undone.';
  return { kind: 'unregister', to, subject: deletionEffectiveAt ? 'Account deletion scheduled' : 'Account deleted', text };
}
