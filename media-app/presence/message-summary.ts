/**
 * `Event: message-summary` (RFC 3842): the message-waiting lamp. The package renders what a summary
 * provider says about a resource; the provider (voicemail's mailbox summary) is plugged in at start
 * (PresenceService.addPackage), so this file knows nothing of mailboxes. A resource the provider
 * knows (a non-null summary) can be subscribed to; its owner publishes a `message-summary` change
 * notice (PresenceService.notifyChange) when the counts move.
 */
import type { EventPackage, Resource } from './package';

export const SIMPLE_MESSAGE_SUMMARY = 'application/simple-message-summary';

export interface MessageSummary {
  newMessages: number;
  oldMessages: number;
  urgentNew?: number;
  urgentOld?: number;
}

export interface MessageSummaryProvider {
  /** The counts of the resource's mailbox, or null when the resource has none. */
  summary(customerId: string, resource: string): Promise<MessageSummary | null>;
}

const count = (n: number | undefined) => (Number.isFinite(n) && (n ?? 0) > 0 ? Math.floor(n!) : 0);

export function messageSummaryBody(account: string, s: MessageSummary | null): string {
  const fresh = count(s?.newMessages);
  const lines = [`Messages-Waiting: ${fresh > 0 ? 'yes' : 'no'}`, `Message-Account: ${account}`];
  if (s) lines.push(`Voice-Message: ${fresh}/${count(s.oldMessages)} (${count(s.urgentNew)}/${count(s.urgentOld)})`);
  return lines.join('\r\n') + '\r\n';
}

export function messageSummaryPackage(provider: MessageSummaryProvider): EventPackage {
  return {
    event: 'message-summary',
    contentType: SIMPLE_MESSAGE_SUMMARY,
    kinds: ['message-summary'],
    async serves(customerId, name) {
      return (await provider.summary(customerId, name)) !== null;
    },
    async prepare(r: Resource) {
      const body = messageSummaryBody(`sip:${r.name}@${r.domain}`, await provider.summary(r.customerId, r.name));
      return () => body;
    },
  };
}
