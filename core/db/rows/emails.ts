/** Row types of core/repos/emails.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { Address } from '../../address';

export const EMAIL_STATUSES = ['', 'initiated', 'processed', 'delivered', 'open', 'click', 'bounce', 'dropped', 'deferred', 'unsubscribe', 'spamreport'] as const;

export type EmailStatus = (typeof EMAIL_STATUSES)[number];

export interface EmailAttachment {
  reference_type: '' | 'recording';
  reference_id: string;
}

export interface EmailRow {
  id: string;
  customer_id: string;
  activeflow_id: string;
  source: Address;
  destinations: Address[];
  status: EmailStatus;
  subject: string;
  content: string;
  attachments: EmailAttachment[];
  provider_ref: string;
  error: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
