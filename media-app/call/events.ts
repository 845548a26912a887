/**
 * How media-app publishes call and activeflow events: through publishResourceEvent
 * (core/events/catalogue.ts), typed by the catalogue, with the resource's API JSON as data. Callers
 * publish after the Postgres write that made the change, and only when it changed something, so
 * each change is one event.
 */
import type { Logger } from 'pino';
import type { EventPublisher } from '../../core/events/bus';
import { publishResourceEvent, type EventType } from '../../core/events/catalogue';
import { callJson, type CallRow } from '../../core/repos/calls';
import type { ActiveflowEmitter } from '../flow/events';
import { inCallIdSpan } from '../kit/call-span';

export type CallEventType = Extract<EventType, `call_${string}`>;

/**
 * A call event with the call's API JSON, in the call's trace (call/trace.ts); a failed publish is
 * logged, never thrown (the row is written).
 */
export async function publishCall(events: EventPublisher, type: CallEventType, row: CallRow, logger?: Logger): Promise<void> {
  await inCallIdSpan(row.id, () => publishResourceEvent(events, type, callJson(row) as never)).then(
    () => undefined,
    (err: Error) => logger?.warn({ err: err.message, call: row.id, type }, 'event publish failed'),
  );
}

/**
 * The flow runner's emitter. The record is the Activeflow's API JSON; it is serialized when
 * published (synchronously), because the runner keeps appending to its executed_actions array.
 * Publishes go out on one connection in call order, so the stream keeps the runner's order.
 */
export function activeflowEmitter(events: EventPublisher, logger?: Logger): ActiveflowEmitter {
  return {
    publish(type, record) {
      void publishResourceEvent(events, type, record as never).catch((err: Error) => logger?.warn({ err: err.message, activeflow: record.id, type }, 'event publish failed'));
    },
  };
}
