/** Row types of core/repos/mail-tokens.ts's tables, declared apart so core/db/tables.ts imports no repository. */

/** email_verification_tokens (control-api/auth/verification-tokens.ts). */
export interface VerificationTokenRow {
  token_hash: string;
  customer_id: string;
  tm_create: Date;
  tm_expire: Date;
  tm_used: Date | null;
}

/** password_reset_tokens (control-api/auth/reset-tokens.ts). */
export interface ResetTokenRow {
  token_hash: string;
  customer_id: string;
  agent_id: string;
  tm_create: Date;
  tm_expire: Date;
  tm_used: Date | null;
}
