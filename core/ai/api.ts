/** Pieces the AI route files share: event publishing from control-api, loose response schemas. */
import { z } from 'zod';
import type { Redis } from 'ioredis';
import { eventPublisher, type EventPublisher } from '../events/bus';
import { publishResourceEvent, type EventType } from '../events/catalogue';

/** The deployment's parts an event is published with (control-api's context). */
export interface EventsSource {
  redis: Redis;
  config: { redisKeyPrefix: string };
}

export function eventsOf(ctx: EventsSource): EventPublisher {
  return eventPublisher(ctx);
}

export async function publish(ctx: EventsSource, type: EventType, payload: { id: string; customer_id: string }): Promise<void> {
  await publishResourceEvent(eventsOf(ctx), type, payload).catch(() => undefined);
}

/** A response schema naming the fields (documentation). */
export function shape(fields: string[]) {
  return z.object(Object.fromEntries(fields.map((f) => [f, z.unknown()])));
}

export const listOfShape = (fields: string[]) => z.object({ result: z.array(shape(fields)), next_page_token: z.string() });
