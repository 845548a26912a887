// One-time mail tokens (email verification, password reset): 32 random bytes shown as 64 lowercase hex.
// Only the SHA-256 of a token is stored, so a database leak does not hand out working links.
import crypto from 'node:crypto';

export const MAIL_TOKEN_RE = /^[0-9a-f]{64}$/;

export function newMailToken(): string {
  return crypto.randomBytes(32).toString('hex');
}

export function hashMailToken(token: string): string {
  return crypto.createHash('sha256').update(token).digest('hex');
}

export function isMailToken(v: unknown): v is string {
  return typeof v === 'string' && MAIL_TOKEN_RE.test(v);
}
