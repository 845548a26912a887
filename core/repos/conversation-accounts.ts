/** conversation_accounts: a customer's account on a messaging platform (sms, line, whatsapp). secret, token and provider_data are write-only. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { AccountType, ConversationAccountRow } from '../db/rows/conversation-accounts';
export { ACCOUNT_TYPES, type AccountType, type ConversationAccountRow } from '../db/rows/conversation-accounts';

/** Never includes secret, token or provider_data (write-only). */
export function conversationAccountJson(a: ConversationAccountRow) {
  return {
    id: a.id,
    customer_id: a.customer_id,
    type: a.type,
    name: a.name,
    detail: a.detail,
    message_flow_id: a.message_flow_id,
    tm_create: formatLegacy(a.tm_create),
    tm_update: formatLegacy(a.tm_update),
    tm_delete: formatLegacy(a.tm_delete),
  };
}

export type AccountWritable = Partial<Pick<ConversationAccountRow, 'name' | 'detail' | 'secret' | 'token' | 'provider_data' | 'message_flow_id'>>;

export function conversationAccountsRepo(db: Db) {
  const table = () => db('conversation_accounts');
  const live = () => table().whereNull('tm_delete');
  return {
    async create(input: { customer_id: string; type: AccountType } & AccountWritable): Promise<ConversationAccountRow> {
      const now = clock.now();
      const [row] = await table()
        .insert({
          name: '',
          detail: '',
          secret: '',
          token: '',
          message_flow_id: EMPTY_UUID,
          ...input,
          provider_data: JSON.stringify(input.provider_data ?? {}),
          id: newId(),
          tm_create: now,
          tm_update: now,
        })
        .returning('*');
      return row as ConversationAccountRow;
    },
    async getOwned(customerId: string, id: string): Promise<ConversationAccountRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as ConversationAccountRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<ConversationAccountRow>> {
      return toPage(await paginate<ConversationAccountRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    async update(customerId: string, id: string, patch: AccountWritable): Promise<ConversationAccountRow | null> {
      const p: Record<string, unknown> = { ...patch, tm_update: clock.now() };
      if (patch.provider_data !== undefined) p.provider_data = JSON.stringify(patch.provider_data);
      const [row] = await live().where({ id, customer_id: customerId }).update(p).returning('*');
      return (row as ConversationAccountRow | undefined) ?? null;
    },
    async softDelete(customerId: string, id: string): Promise<ConversationAccountRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as ConversationAccountRow | undefined) ?? null;
    },
  };
}
