/**
 * What the manager's /conversations and the agent's /service_agents/conversations share when they
 * change a conversation: a new owner must be an agent of the same customer, and every change is
 * written and published (conversation_updated) exactly once, the same way from both.
 */
import type { AppContext } from '../context';
import { ApiError } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { conversationJson, conversationsRepo, type ConversationRow } from '../../core/repos/conversations';
import { messagingDeps } from './deps';

type ConversationPatch = Parameters<ReturnType<typeof conversationsRepo>['update']>[1];

/** Refuses an owner_id that is not an agent of the customer (EMPTY_UUID, "no owner", passes). */
export async function assertOwnerAgent(ctx: AppContext, customerId: string, ownerId: string): Promise<void> {
  if (ownerId === EMPTY_UUID) return;
  if (!(await ctx.repos.agents.get(ownerId, { customerId }))) {
    throw new ApiError('INVALID_ARGUMENT', 'owner_id: no such agent', { details: [{ field: 'owner_id', issue: 'not an agent of this customer' }] });
  }
}

/** Writes the patch and publishes the result; `missing` is the caller's own not-found error. */
export async function saveConversation(ctx: AppContext, id: string, patch: ConversationPatch, missing: () => Error): Promise<ReturnType<typeof conversationJson>> {
  const row: ConversationRow | null = await conversationsRepo(ctx.db).update(id, patch);
  if (!row) throw missing();
  const json = conversationJson(row);
  await messagingDeps(ctx).publish('conversation_updated', json);
  return json;
}

/** Clears the owner: the conversation goes back to the pool. */
export function unassignConversation(ctx: AppContext, id: string, missing: () => Error): Promise<ReturnType<typeof conversationJson>> {
  return saveConversation(ctx, id, { owner_type: '', owner_id: EMPTY_UUID }, missing);
}
