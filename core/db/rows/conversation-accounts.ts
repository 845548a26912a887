/** Row types of core/repos/conversation-accounts.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export const ACCOUNT_TYPES = ['line', 'sms', 'whatsapp'] as const;

export type AccountType = (typeof ACCOUNT_TYPES)[number];

export interface ConversationAccountRow {
  id: string;
  customer_id: string;
  type: AccountType;
  name: string;
  detail: string;
  secret: string;
  token: string;
  provider_data: Record<string, unknown>;
  message_flow_id: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
