/**
 * Where the busy lamp's dialogs come from: the call legs of extensions on this node. Every call the
 * node owns passes through its CallRegistry; a leg is an extension's when it is the incoming call
 * from a registered extension (the extension is the initiator; the remote is the destination) or the
 * outgoing call to one (the recipient; the remote is the caller). Its state follows the one place
 * call states move (call/state.ts, the session's `status` event):
 *
 *   dialing → trying, ringing → early, progressing → confirmed,
 *   terminating / canceling / hangup → removed, shown once as terminated
 *
 * written to the shared store (core/presence/store.ts), which tells every node.
 */
import type { Logger } from 'pino';
import type { Address } from '../../core/address';
import type { CallStatus } from '../../core/calls/model';
import { registrationDomain } from '../../core/extensions/domain';
import type { DialogEntry, DialogPhase, PresenceParty, PresenceStore } from '../../core/presence/store';
import type { CallRow } from '../../core/repos/calls';
import { customerDomainsRepo } from '../../core/repos/extensions';
import type { Knex } from '../../core/db/knex';
import type { CallSession } from '../call/session';

export interface ExtensionLeg {
  extension: string;
  direction: 'initiator' | 'recipient';
  remote: Address;
}

/** The extension whose leg this call is, or null. */
export function extensionLeg(row: CallRow): ExtensionLeg | null {
  if (row.direction === 'incoming' && row.source.type === 'extension') return { extension: row.source.target, direction: 'initiator', remote: row.destination };
  if (row.direction === 'outgoing' && row.destination.type === 'extension') return { extension: row.destination.target, direction: 'recipient', remote: row.source };
  return null;
}

/** The dialog state a call status shows, or null once the call is ending. */
export function phaseOf(status: CallStatus): DialogPhase | null {
  switch (status) {
    case 'dialing':
      return 'trying';
    case 'ringing':
      return 'early';
    case 'progressing':
      return 'confirmed';
    default:
      return null;
  }
}

/** The URI a party is shown with: an extension or SIP user in the customer's domain, a number as tel. */
export function partyOf(a: Address, domain: string): PresenceParty {
  const display = a.target_name || a.name || undefined;
  const uri = a.type === 'tel' ? `tel:${a.target}` : /^sips?:/i.test(a.target) ? a.target : a.target.includes('@') ? `sip:${a.target}` : `sip:${a.target}@${domain}`;
  return display ? { uri, display } : { uri };
}

export class CallPresenceSource {
  private readonly domains = new Map<string, Promise<string>>();

  constructor(
    private readonly store: PresenceStore,
    private readonly db: Knex,
    private readonly sipDomain: string,
    private readonly logger: Logger,
  ) {}

  private domainOf(customerId: string): Promise<string> {
    let d = this.domains.get(customerId);
    if (!d) {
      d = customerDomainsRepo(this.db)
        .getLabel(customerId)
        .then((label) => (label ? registrationDomain(label, this.sipDomain) : this.sipDomain));
      d.catch(() => this.domains.delete(customerId));
      this.domains.set(customerId, d);
    }
    return d;
  }

  /** Follows one call; nothing happens for a call that is not an extension's leg. */
  watch(call: CallSession): void {
    const leg = extensionLeg(call.row);
    if (!leg) return;
    const customerId = call.row.customer_id;
    const since = Date.now();
    let last: Promise<void> = Promise.resolve();
    let ended = false;
    const entry = async (state: DialogPhase): Promise<DialogEntry> => ({
      id: call.id,
      state,
      direction: leg.direction,
      ...(call.row.sip_call_id ? { callId: call.row.sip_call_id } : {}),
      remote: partyOf(leg.remote, await this.domainOf(customerId)),
      since,
    });
    // writes in the order the states moved
    const write = (fn: () => Promise<void>) => {
      last = last.then(fn).catch((err: Error) => this.logger.warn({ err: err.message, call: call.id }, 'presence state not written'));
    };
    const onStatus = (status: CallStatus) => {
      if (ended) return;
      const phase = phaseOf(status);
      if (phase) return write(async () => this.store.setDialog(customerId, leg.extension, await entry(phase)));
      ended = true;
      call.off('status', onStatus);
      write(async () => this.store.endDialog(customerId, leg.extension, await entry('terminated')));
    };
    call.on('status', onStatus);
    call.once('hangup', () => onStatus('hangup'));
    onStatus(call.status);
  }
}
