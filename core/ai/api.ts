/** Pieces the AI route files share: event publishing from control-api, loose response schemas. */
import { z } from 'zod';
import type { Redis } from 'ioredis';
import { EventPublisher } from '../events/bus';
import { publishResourceEvent, type EventType } from '../events/catalogue';

const publishers = new WeakMap<object, EventPublisher>();

export function eventsOf(redis: Redis): EventPublisher {
  let p = publishers.get(redis);
  if (!p) publishers.set(redis, (p = new EventPublisher(redis)));
  return p;
}

export async function publish(redis: Redis, type: EventType, payload: { id: string; customer_id: string }): Promise<void> {
  await publishResourceEvent(eventsOf(redis), type, payload).catch(() => undefined);
}

/** A response schema naming the fields (documentation). */
export function shape(fields: string[]) {
  return z.object(Object.fromEntries(fields.map((f) => [f, z.unknown()])));
}

export const listOfShape = (fields: string[]) => z.object({ result: z.array(shape(fields)), next_page_token: z.string() });
