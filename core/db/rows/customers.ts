/** Row types of core/repos/customers.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export const CUSTOMER_STATUSES = ['initial', 'active', 'frozen', 'expired', 'deleted'] as const;

export type CustomerStatus = (typeof CUSTOMER_STATUSES)[number];

export const WEBHOOK_METHODS = ['', 'POST', 'GET', 'PUT', 'DELETE'] as const;

export type WebhookMethod = (typeof WEBHOOK_METHODS)[number];

export const IDENTITY_STATUSES = ['none', 'pending', 'verified', 'rejected'] as const;

export type IdentityVerificationStatus = (typeof IDENTITY_STATUSES)[number];

export interface CustomerRow {
  id: string;
  name: string;
  detail: string;
  email: string;
  email_verified: boolean;
  phone_number: string;
  address: string;
  webhook_method: WebhookMethod;
  webhook_uri: string;
  webhook_secret: string;
  billing_account_id: string;
  metadata: Record<string, unknown>;
  status: CustomerStatus;
  identity_verification_status: IdentityVerificationStatus;
  terms_agreed_version: string;
  terms_agreed_ip: string;
  tm_deletion_scheduled: Date | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
  /** The customer's cap on live outgoing PSTN calls (core/calls/dial-policy.ts); null: the platform default. */
  max_concurrent_pstn_calls: number | null;
  /** Generation of the derived Twilio AuthToken (core/twilio/auth-token.ts); raising it rotates the token. */
  twilio_token_generation: number;
}
