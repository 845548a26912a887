/** queuecall events, published once after each status write. */
import type { EventPublisher } from '../events/bus';
import { publishResourceEvent, type EventType } from '../events/catalogue';
import { queuecallJson, type QueuecallRow, type QueuecallStatus } from '../repos/queuecalls';

const EVENT_OF: Partial<Record<QueuecallStatus, EventType>> = {
  waiting: 'queuecall_waiting',
  connecting: 'queuecall_connecting',
  service: 'queuecall_serviced',
  done: 'queuecall_done',
  abandoned: 'queuecall_abandoned',
};

export async function publishQueuecall(publisher: EventPublisher, type: EventType, q: QueuecallRow): Promise<void> {
  await publishResourceEvent(publisher, type, queuecallJson(q)).catch(() => undefined);
}

/** The event of a status (kicking and initiating have none of their own). */
export async function publishQueuecallStatus(publisher: EventPublisher, q: QueuecallRow): Promise<void> {
  const type = EVENT_OF[q.status];
  if (type) await publishQueuecall(publisher, type, q);
}
