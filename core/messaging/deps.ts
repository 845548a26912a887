/**
 * What the messaging, email and conversation services need from their host process: the
 * database, the SMS provider, where callbacks reach us, how to publish events and how to start
 * the flow of an inbound message. control-api builds one (control-api/messaging/deps.ts); tests
 * may build their own.
 */
import type { Knex } from 'knex';
import type { Logger } from '../logger';
import type { EventPublisher } from '../events/bus';
import { publishResourceEvent, type EventType, type ResourcePayload } from '../events/catalogue';
import type { SmsProvider } from './provider';

/** Starts a run of flowId for a received message; returns the activeflow id. */
export type FlowStarter = (input: { customerId: string; flowId: string; referenceType: 'conversation'; referenceId: string; variables: Record<string, string> }) => Promise<string>;

export type Publish = (type: EventType, payload: ResourcePayload) => Promise<void>;

export interface MessagingDeps {
  db: Knex;
  provider: SmsProvider | null;
  /** Public base URL of control-api (no trailing slash): provider callbacks are built on it. */
  publicUrl: string;
  publish: Publish;
  /** Absent: inbound messages are recorded but no flow starts (logged). */
  startFlow?: FlowStarter;
  log?: Pick<Logger, 'warn' | 'info'>;
  /** Told of each send's delivery to the provider, which runs after the send returns (a test awaits them all). */
  onDelivered?: (delivery: Promise<void>) => void;
}

/** Publishing happens after the commit; a broken event stream must not fail the request. */
export function publisherFor(events: EventPublisher | null, log?: Pick<Logger, 'warn'>): Publish {
  return async (type, payload) => {
    if (!events) return;
    try {
      await publishResourceEvent(events, type, payload);
    } catch (err) {
      log?.warn({ err, event_type: type }, 'event publish failed');
    }
  };
}
