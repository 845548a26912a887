/**
 * The state busy lamps and presence are made of, in Redis so that every media-app node sees every
 * other's, and the change notices that tell the nodes holding subscriptions to send a NOTIFY.
 *
 * A resource is a name inside one customer: an extension (`extension` of the extensions table) or
 * anything a feature publishes under a name of its own (a park slot: `publishState`). Its dialogs
 * come from two places, shown together:
 *
 *   calls      one hash field per call leg of the extension, written by the node that owns the leg
 *              as the leg's state moves (media-app/presence/call-source.ts), removed when it ends
 *   published  the whole list a feature publishes for the resource (`publishState`), replacing the
 *              list before; a resource with a published list (even empty) exists for SUBSCRIBE
 *
 * Every change is published once on one channel (`presence:changes`) as a `PresenceChange`: the
 * resource, and the dialogs that just ended (those are shown once as terminated, RFC 4235 3.7.1,
 * then dropped). Registrations and message summaries change no state here; their owners publish a
 * notice of the kind `registration` or `message-summary` and the packages read their own source.
 */
import type { Redis } from 'ioredis';

/** RFC 4235 3.7.1 dialog states. */
export type DialogPhase = 'trying' | 'proceeding' | 'early' | 'confirmed' | 'terminated';
export const DIALOG_PHASES: readonly DialogPhase[] = ['trying', 'proceeding', 'early', 'confirmed', 'terminated'];

export interface PresenceParty {
  /** A SIP or tel URI. */
  uri: string;
  display?: string;
}

/** One dialog of a resource, as dialog-info+xml shows it. */
export interface DialogEntry {
  /** Unique per resource (a call leg id, a slot's parked call id). */
  id: string;
  state: DialogPhase;
  direction?: 'initiator' | 'recipient';
  /** The SIP Call-ID and tags of the dialog, when known (directed pickup uses them). */
  callId?: string;
  localTag?: string;
  remoteTag?: string;
  remote?: PresenceParty;
  /** Epoch ms the dialog started (its duration is shown from it). */
  since?: number;
}

export type ChangeKind = 'dialog' | 'registration' | 'message-summary';

export interface PresenceChange {
  customerId: string;
  resource: string;
  kind: ChangeKind;
  /** Dialogs that ended with this change: shown once as terminated. */
  ended?: DialogEntry[];
  /** Epoch ms the change happened (for the NOTIFY latency metric and benchmark). */
  at: number;
}

export const PRESENCE_CHANNEL = 'presence:changes';
/** A call leg's entry lives at most this long when the node that wrote it dies without removing it. */
const CALL_ENTRY_TTL_SEC = 86_400;

const callsKey = (customerId: string, resource: string) => `presence:calls:${customerId}:${resource}`;
const publishedKey = (customerId: string, resource: string) => `presence:published:${customerId}:${resource}`;

function parseEntries(values: string[]): DialogEntry[] {
  const out: DialogEntry[] = [];
  for (const v of values) {
    try {
      const e = JSON.parse(v) as DialogEntry;
      if (typeof e.id === 'string' && DIALOG_PHASES.includes(e.state)) out.push(e);
    } catch {
      /* a damaged entry is not shown */
    }
  }
  return out;
}

/** A stored list of entries (a published state); damaged text is an empty list. */
function parseList(text: string | null): DialogEntry[] {
  if (!text) return [];
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? parseEntries(v.map((d) => JSON.stringify(d))) : [];
  } catch {
    return [];
  }
}

/** A change notice from the channel, or null when the text is not one. */
export function parseChange(text: string): PresenceChange | null {
  try {
    const c = JSON.parse(text) as PresenceChange;
    if (typeof c.customerId !== 'string' || typeof c.resource !== 'string' || typeof c.at !== 'number') return null;
    if (c.kind !== 'dialog' && c.kind !== 'registration' && c.kind !== 'message-summary') return null;
    return { ...c, ended: parseEntries((c.ended ?? []).map((e) => JSON.stringify(e))) };
  } catch {
    return null;
  }
}

export class PresenceStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  get channel(): string {
    return this.prefix + PRESENCE_CHANNEL;
  }

  private async publish(change: Omit<PresenceChange, 'at'>): Promise<void> {
    await this.redis.publish(this.channel, JSON.stringify({ ...change, at: Date.now() }));
  }

  /** A call leg of the extension `resource` is in this state now. */
  async setDialog(customerId: string, resource: string, entry: DialogEntry): Promise<void> {
    const key = this.prefix + callsKey(customerId, resource);
    await this.redis.multi().hset(key, entry.id, JSON.stringify(entry)).expire(key, CALL_ENTRY_TTL_SEC).exec();
    await this.publish({ customerId, resource, kind: 'dialog' });
  }

  /** A call leg of the extension ended: removed, shown once as terminated. */
  async endDialog(customerId: string, resource: string, entry: DialogEntry): Promise<void> {
    await this.redis.hdel(this.prefix + callsKey(customerId, resource), entry.id);
    await this.publish({ customerId, resource, kind: 'dialog', ended: [{ ...entry, state: 'terminated' }] });
  }

  /**
   * Publishes the whole dialog list of a resource (a park slot: one confirmed dialog while a call is
   * parked, none when free). Dialogs of the list before that are not in the new one are shown once
   * as terminated. The resource can be subscribed to from now on.
   */
  async publishState(customerId: string, resource: string, dialogs: readonly DialogEntry[]): Promise<void> {
    // one command: two publishers at once each see the list the other replaced
    const before = await this.redis.getset(this.prefix + publishedKey(customerId, resource), JSON.stringify(dialogs));
    const now = new Set(dialogs.map((d) => d.id));
    const ended = parseList(before).filter((d) => !now.has(d.id));
    await this.publish({ customerId, resource, kind: 'dialog', ended: ended.map((d) => ({ ...d, state: 'terminated' as const })) });
  }

  /** Whether a feature published a state for this resource (it then exists for SUBSCRIBE). */
  async isPublished(customerId: string, resource: string): Promise<boolean> {
    return (await this.redis.exists(this.prefix + publishedKey(customerId, resource))) === 1;
  }

  /** A change that lives elsewhere (a registration, a mailbox): the packages re-read their source. */
  async notifyChange(customerId: string, resource: string, kind: Exclude<ChangeKind, 'dialog'>): Promise<void> {
    await this.publish({ customerId, resource, kind });
  }

  /** The resource's live dialogs: its call legs' and its published ones, oldest first. */
  async dialogs(customerId: string, resource: string): Promise<DialogEntry[]> {
    const [calls, published] = await Promise.all([this.redis.hvals(this.prefix + callsKey(customerId, resource)), this.redis.get(this.prefix + publishedKey(customerId, resource))]);
    const list = [...parseEntries(calls), ...parseList(published)];
    return list.sort((a, b) => (a.since ?? 0) - (b.since ?? 0));
  }

  /**
   * Listens to every node's changes on `sub` (a connection of its own: a subscribed ioredis
   * connection takes no other command). Resolves once subscribed; the returned function stops.
   */
  async listen(sub: Redis, onChange: (c: PresenceChange) => void): Promise<() => Promise<void>> {
    const channel = this.channel;
    const handler = (ch: string, text: string) => {
      if (ch !== channel) return;
      const c = parseChange(text);
      if (c) onChange(c);
    };
    sub.on('message', handler);
    await sub.subscribe(channel);
    return async () => {
      sub.off('message', handler);
      await sub.unsubscribe(channel).catch(() => undefined);
    };
  }
}
