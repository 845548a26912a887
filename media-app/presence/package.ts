/**
 * An event package (RFC 6665 section 7): the `Event` token it serves, the body type its NOTIFYs carry,
 * which change notices concern it, and how it renders the resource's full state. The subscription
 * manager (manager.ts) knows nothing of any package's content; packages are registered by name
 * (index.ts: dialog, presence, message-summary once a summary provider is given).
 */
import type { ChangeKind, PresenceChange } from '../../core/presence/store';

/** What a NOTIFY is about: the resource and how it is named in bodies. */
export interface Resource {
  customerId: string;
  /** The name inside the customer (an extension, a park slot). */
  name: string;
  /** The customer's registration domain: `sip:{name}@{domain}` is the resource's URI. */
  domain: string;
}

/** The body of one NOTIFY for a given subscription version (RFC 4235 counts versions per subscription). */
export type Render = (version: number) => string;

export interface EventPackage {
  /** The `Event` header's package name (lower case). */
  readonly event: string;
  /** The one body type it sends (406 when a SUBSCRIBE's Accept leaves it out). */
  readonly contentType: string;
  /** The change notices that concern its subscriptions. */
  readonly kinds: readonly ChangeKind[];
  /**
   * Whether the package serves a resource beyond the extensions and published resources (every
   * package serves those): a mailbox of a message-summary provider. Absent: no others.
   */
  serves?(customerId: string, name: string): Promise<boolean>;
  /** Reads the resource's full state once (for all its subscriptions); `change` is the notice that caused it, null for a new or refreshed subscription. */
  prepare(resource: Resource, change: PresenceChange | null): Promise<Render>;
}
