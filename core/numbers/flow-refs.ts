/**
 * Numbers point at flows (call_flow_id, message_flow_id): a set id must be a live, listed flow of the
 * same customer (core/repos/flows flowExists; tests may replace the check). The empty UUID (unset) is
 * always accepted.
 */
import type { Db } from '../db/knex';
import { ApiError } from '../errors';
import { EMPTY_UUID } from '../ids';
import { flowExists as liveFlowOfCustomer } from '../repos/flows';

export type FlowExists = (db: Db, customerId: string, flowId: string) => Promise<boolean>;

let flowExists: FlowExists = liveFlowOfCustomer;

/** Replaces the check (tests); null restores the real one. */
export function setFlowExistenceCheck(fn: FlowExists | null): void {
  flowExists = fn ?? liveFlowOfCustomer;
}

/** 404 FLOW_NOT_FOUND when `flowId` is set and is not a flow of the customer. */
export async function assertFlowRef(db: Db, customerId: string, flowId: string, field: string): Promise<void> {
  if (flowId === EMPTY_UUID) return;
  if (!(await flowExists(db, customerId, flowId))) {
    throw new ApiError('FLOW_NOT_FOUND', `${field}: flow not found`, { details: [{ field }] });
  }
}
