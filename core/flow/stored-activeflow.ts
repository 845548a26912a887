/**
 * An activeflow that runs without a call of its own (POST /activeflows, a conversation's message
 * flow, a summary's on_end_flow_id): its row is written `running`, then activeflow.start goes on the
 * shared queue and whichever media-app node claims it runs it (media-app/call/stored-activeflow.ts).
 * When no node can be told, the row is ended at once (error) rather than left running forever.
 */
import type { Db } from '../db/knex';
import type { CommandBus } from '../commands/bus';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { activeflowsRepo, type ActiveflowRow } from '../repos/activeflows';
import type { ActiveflowRecord } from './activeflow';

export interface StoredActiveflow {
  /** A client-chosen id (POST /activeflows); a new one otherwise. */
  id?: string;
  customerId: string;
  flowId: string;
  onCompleteFlowId: string;
  referenceType: ActiveflowRow['reference_type'];
  referenceId: string;
  referenceActiveflowId?: string | null;
  variables: Record<string, string>;
  webhook?: { uri: string; method: ActiveflowRow['webhook_method'] };
}

/** The row of a new stored activeflow: running, no action yet, created and updated at `now` (ISO). */
export function storedActiveflowRow(id: string, spec: Omit<StoredActiveflow, 'id'>, now: string): ActiveflowRecord {
  return {
    id,
    customer_id: spec.customerId,
    flow_id: spec.flowId,
    status: 'running',
    reference_type: spec.referenceType,
    reference_id: spec.referenceId,
    reference_activeflow_id: spec.referenceActiveflowId || EMPTY_UUID,
    on_complete_flow_id: spec.onCompleteFlowId,
    webhook_uri: spec.webhook?.uri ?? '',
    webhook_method: spec.webhook?.method ?? '',
    current_action: null,
    forward_action_id: '',
    executed_actions: [],
    variables: spec.variables,
    complete_count: 0,
    end_reason: '',
    error: '',
    tm_create: now,
    tm_update: now,
    tm_delete: null,
  };
}

/**
 * Writes and starts it. `before` runs in the same transaction as the row's insert (POST /activeflows
 * writes its inline flow there, so neither exists without the other).
 */
export async function startStoredActiveflow(db: Db, bus: Pick<CommandBus, 'startActiveflow'>, spec: StoredActiveflow, before?: (trx: Db) => Promise<void>): Promise<ActiveflowRow> {
  const id = spec.id ?? newId();
  const now = clock.now().toISOString();
  const insert = (d: Db) => activeflowsRepo(d).insert(storedActiveflowRow(id, spec, now));
  const row = before
    ? await db.transaction(async (trx) => {
        await before(trx);
        return insert(trx);
      })
    : await insert(db);
  try {
    await bus.startActiveflow(id, spec.customerId, `activeflow-start-${id}`);
  } catch (err) {
    await activeflowsRepo(db).endOrphan(id, 'error', 'could not reach a media-app node');
    throw err;
  }
  return row;
}
