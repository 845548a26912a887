/**
 * Numbers point at flows (call_flow_id, message_flow_id). The flows work owns the flows table; until
 * it registers a check here every UUID is accepted. The empty UUID (unset) is always accepted.
 */
import type { Db } from '../db/knex';
import { ApiError } from '../errors';
import { EMPTY_UUID } from '../ids';

export type FlowExists = (db: Db, customerId: string, flowId: string) => Promise<boolean>;

let flowExists: FlowExists = async () => true;

/** The flows work calls this once at start-up: `(db, customerId, flowId) => live flow of that customer?`. */
export function setFlowExistenceCheck(fn: FlowExists | null): void {
  flowExists = fn ?? (async () => true);
}

/** 404 FLOW_NOT_FOUND when `flowId` is set and is not a flow of the customer. */
export async function assertFlowRef(db: Db, customerId: string, flowId: string, field: string): Promise<void> {
  if (flowId === EMPTY_UUID) return;
  if (!(await flowExists(db, customerId, flowId))) {
    throw new ApiError('FLOW_NOT_FOUND', `${field}: flow not found`, { details: [{ field }] });
  }
}
