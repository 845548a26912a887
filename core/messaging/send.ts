/**
 * Outbound SMS: validate (source an owned, active, normal number; destinations E.164), then in one
 * transaction write the message with its targets queued, its conversation threads and the charge,
 * so a 402 leaves nothing behind. After the commit each target is handed to the provider; its
 * answer and later delivery callbacks (callbacks.ts) move the target through status.ts.
 */
import { invalidArgument, serviceUnavailable } from '../errors';
import { inTransaction, charge } from '../billing';
import { rates } from '../billing/rates';
import { isE164, isVirtualNumber } from '../numbers/e164';
import { numbersRepo } from '../repos/numbers';
import { messageJson, messagesRepo, type Address, type MessageWithTargets, type TargetRow, type TargetStatus } from '../repos/messages';
import { conversationMessageJson, conversationJson, conversationsRepo } from '../repos/conversations';
import { mirroredMessages, statusOfTarget, threadSms, type ThreadEntry } from '../conversations/threads';
import { smsParts } from './segments';
import { allowedFrom } from './status';
import { SmsGatewayTimeout, SmsRejected } from './provider';
import type { MessagingDeps } from './deps';

export const MAX_SMS_TEXT = 1600;
export const MAX_SMS_DESTINATIONS = 100;

export interface SendSmsInput {
  source: Address;
  destinations: Address[];
  text: string;
}

/** The path of a target's delivery callback (mounted outside /v1.0, see control-api/messaging/router.ts). */
export function statusCallbackPath(provider: string, targetId: string): string {
  return `/hooks/sms/${provider}/status/${targetId}`;
}

function checkInput(input: SendSmsInput): void {
  if (input.source.type !== 'tel' || !isE164(input.source.target)) {
    throw invalidArgument('source: must be a tel address with an E.164 number', [{ field: 'source.target', issue: 'E.164 number required' }]);
  }
  if (input.destinations.length === 0) throw invalidArgument('destinations: at least one is required', [{ field: 'destinations', issue: 'required' }]);
  if (input.destinations.length > MAX_SMS_DESTINATIONS) {
    throw invalidArgument(`destinations: at most ${MAX_SMS_DESTINATIONS}`, [{ field: 'destinations', issue: 'too many' }]);
  }
  input.destinations.forEach((d, i) => {
    if (d.type !== 'tel' || !isE164(d.target)) {
      throw invalidArgument(`destinations[${i}]: must be a tel address with an E.164 number`, [{ field: `destinations.${i}.target`, issue: 'E.164 number required' }]);
    }
  });
  if (input.text.length === 0) throw invalidArgument('text: must not be empty', [{ field: 'text', issue: 'empty' }]);
  if (input.text.length > MAX_SMS_TEXT) throw invalidArgument(`text: at most ${MAX_SMS_TEXT} characters`, [{ field: 'text', issue: 'too long' }]);
}

/** Writes, charges and starts delivering an SMS; resolves once it is committed (delivery goes on). */
export async function sendSms(deps: MessagingDeps, customerId: string, input: SendSmsInput): Promise<MessageWithTargets> {
  checkInput(input);
  const provider = deps.provider;
  if (!provider) throw serviceUnavailable('no SMS provider is configured (SMS_PROVIDER)');
  const number = await numbersRepo(deps.db).getByNumber(input.source.target);
  if (!number || number.customer_id !== customerId || number.status !== 'active') {
    throw invalidArgument('source: not a number of this customer', [{ field: 'source.target', issue: 'not an owned number' }]);
  }
  if (number.type === 'virtual' || isVirtualNumber(number.number)) {
    throw invalidArgument('source: a virtual number cannot send SMS', [{ field: 'source.target', issue: 'virtual number' }]);
  }
  const parts = smsParts(input.text);
  const rate = rates().sms;
  const { message, threads } = await inTransaction(deps.db, async (trx) => {
    const message = await messagesRepo(trx).create({
      customer_id: customerId,
      source: clean(input.source),
      text: input.text,
      direction: 'outbound',
      provider: provider.name,
      targets: input.destinations.map((d) => ({ destination: clean(d), status: 'queued' as const, parts })),
    });
    const threads = await threadSms(trx, message);
    const units = parts * message.targets.length;
    await charge(trx, {
      customerId,
      amount: rate * units,
      costType: 'sms',
      referenceType: 'sms',
      referenceId: message.id,
      idempotencyKey: `sms:${message.id}`,
      billableUnits: units,
      ratePerUnit: rate,
    });
    return { message, threads };
  });
  await deps.publish('message_created', messageJson(message));
  await publishThreads(deps, threads);
  const delivery = Promise.all(message.targets.map((t) => deliver(deps, message, t))).then(() => undefined);
  deps.onDelivered?.(delivery);
  return message;
}

export async function publishThreads(deps: MessagingDeps, threads: ThreadEntry[]): Promise<void> {
  for (const t of threads) {
    if (t.created) await deps.publish('conversation_created', conversationJson(t.conversation));
    await deps.publish('conversation_message_created', conversationMessageJson(t.message));
  }
}

async function deliver(deps: MessagingDeps, message: MessageWithTargets, target: TargetRow): Promise<void> {
  const provider = deps.provider!;
  let next: { status: TargetStatus; provider_ref?: string; error?: string; parts?: number };
  try {
    const r = await provider.send({
      from: message.source.target,
      to: target.destination.target,
      text: message.text,
      statusCallbackUrl: deps.publicUrl + statusCallbackPath(provider.name, target.id),
    });
    next = { status: r.status, provider_ref: r.providerRef, ...(r.parts ? { parts: r.parts } : {}) };
  } catch (err) {
    const status: TargetStatus = err instanceof SmsGatewayTimeout ? 'gw_timeout' : 'failed';
    if (!(err instanceof SmsRejected) && !(err instanceof SmsGatewayTimeout)) deps.log?.warn({ err }, 'sms send failed');
    next = { status, error: (err as Error).message.slice(0, 500) };
  }
  try {
    const repo = messagesRepo(deps.db);
    if (next.provider_ref) await repo.setProviderRef(target.id, next.provider_ref);
    // The answer's "queued" is where the target already is; only later states move it.
    if (next.status !== 'queued') await applyTargetStatus(deps, target.id, next.status, next.error ?? '');
  } catch (err) {
    deps.log?.warn({ err, target_id: target.id }, 'sms status update failed');
  }
}

/** Moves a target (when status.ts allows) and publishes message_updated and the conversation message. */
export async function applyTargetStatus(deps: MessagingDeps, targetId: string, status: TargetStatus, error: string): Promise<boolean> {
  const repo = messagesRepo(deps.db);
  const moved = await repo.moveTarget(targetId, allowedFrom(status), { status, ...(error ? { error } : {}) });
  if (!moved) return false;
  const message = await repo.get(moved.message_id);
  if (!message) return true;
  await deps.publish('message_updated', messageJson(message));
  const convStatus = statusOfTarget(status);
  for (const cm of await mirroredMessages(deps.db, message.id, moved.destination.target)) {
    if (cm.status === convStatus) continue;
    const updated = await conversationsRepo(deps.db).setMessageStatus(cm.id, convStatus);
    if (updated) await deps.publish('conversation_message_updated', conversationMessageJson(updated));
  }
  return true;
}

function clean(a: Address): Address {
  const out: Address = { type: a.type, target: a.target };
  if (a.target_name) out.target_name = a.target_name;
  if (a.name) out.name = a.name;
  if (a.detail) out.detail = a.detail;
  return out;
}

export const _test = { checkInput };
