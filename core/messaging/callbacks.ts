/**
 * What the provider posts back: delivery reports for a target (status callback URL names the
 * target, so a report that overtakes the send's answer still finds it) and inbound messages to one
 * of our numbers (recorded, threaded, and the number's message_flow_id started).
 */
import { EMPTY_UUID } from '../ids';
import { inTransaction } from '../billing';
import { numbersRepo } from '../repos/numbers';
import { messageJson, messagesRepo, type MessageWithTargets } from '../repos/messages';
import { threadSms, type ThreadEntry } from '../conversations/threads';
import type { InboundSms, StatusReport } from './provider';
import type { MessagingDeps } from './deps';
import { applyTargetStatus, publishThreads } from './send';

export type StatusOutcome = 'applied' | 'ignored' | 'unknown_target';

export async function handleStatusReport(deps: MessagingDeps, targetId: string, report: StatusReport): Promise<StatusOutcome> {
  const repo = messagesRepo(deps.db);
  const target = await repo.target(targetId);
  if (!target) return 'unknown_target';
  // A report for another send of ours (stale URL reuse) must not move this target.
  if (target.provider_ref && target.provider_ref !== report.providerRef) return 'unknown_target';
  if (!target.provider_ref) await repo.setProviderRef(target.id, report.providerRef);
  if (!report.status) return 'ignored';
  return (await applyTargetStatus(deps, target.id, report.status, report.error)) ? 'applied' : 'ignored';
}

export interface InboundResult {
  message: MessageWithTargets;
  /** False when the provider retried a message already recorded. */
  created: boolean;
  activeflowId: string | null;
}

/** null when `to` is no live number of ours. */
export async function handleInbound(deps: MessagingDeps, providerName: string, sms: InboundSms): Promise<InboundResult | null> {
  const number = await numbersRepo(deps.db).getByNumber(sms.to);
  if (!number || number.status !== 'active') return null;
  const repo = messagesRepo(deps.db);
  const seen = await repo.targetByRef(`${providerName}:in:${sms.providerRef}`);
  if (seen) {
    const message = await repo.get(seen.message_id);
    if (message) return { message, created: false, activeflowId: null };
  }
  let threads: ThreadEntry[] = [];
  const message = await inTransaction(deps.db, async (trx) => {
    const m = await messagesRepo(trx).create({
      customer_id: number.customer_id,
      source: { type: 'tel', target: sms.from },
      text: sms.text,
      direction: 'inbound',
      provider: providerName,
      // Inbound provider refs are namespaced so they never collide with our sends' refs.
      targets: [{ destination: { type: 'tel', target: sms.to }, status: 'received', parts: sms.parts, provider_ref: `${providerName}:in:${sms.providerRef}` }],
    });
    threads = await threadSms(trx, m);
    return m;
  });
  await deps.publish('message_created', messageJson(message));
  await publishThreads(deps, threads);

  let activeflowId: string | null = null;
  const thread = threads[0];
  if (number.message_flow_id && number.message_flow_id !== EMPTY_UUID && thread) {
    if (!deps.startFlow) {
      deps.log?.warn({ number_id: number.id }, 'inbound SMS: no flow starter, message_flow_id not run');
    } else {
      try {
        activeflowId = await deps.startFlow({
          customerId: number.customer_id,
          flowId: number.message_flow_id,
          referenceType: 'conversation',
          referenceId: thread.conversation.id,
          variables: {
            'svc.conversation.id': thread.conversation.id,
            'svc.conversation.type': thread.conversation.type,
            'svc.conversation.self.target': number.number,
            'svc.conversation.peer.target': sms.from,
            'svc.conversation_message.id': thread.message.id,
            'svc.conversation_message.text': sms.text,
            'svc.conversation_message.direction': 'incoming',
            'svc.message.id': message.id,
            'svc.message.source.target': sms.from,
            'svc.message.destination.target': sms.to,
            'svc.message.text': sms.text,
          },
        });
      } catch (err) {
        // The message stays recorded; the provider must not retry it because our flow failed.
        deps.log?.warn({ err, number_id: number.id }, 'inbound SMS: message flow did not start');
      }
    }
  }
  return { message, created: true, activeflowId };
}
