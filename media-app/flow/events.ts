/** Where activeflow events go (activeflow_created, activeflow_updated on every advance, activeflow_deleted). */
import type { ActiveflowRecord } from './record';

export type ActiveflowEventType = 'activeflow_created' | 'activeflow_updated' | 'activeflow_deleted';

export interface ActiveflowEmitter {
  publish(type: ActiveflowEventType, record: ActiveflowRecord): void;
}

export const nullEmitter: ActiveflowEmitter = { publish() {} };

/** Keeps every event in order; used by the simulator and tests. */
export class ListEmitter implements ActiveflowEmitter {
  readonly events: { type: ActiveflowEventType; record: ActiveflowRecord }[] = [];
  publish(type: ActiveflowEventType, record: ActiveflowRecord): void {
    this.events.push({ type, record });
  }
}
