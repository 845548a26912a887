/**
 * Writes a groupcall and its Call rows (outgoing, dialing, groupcall_id set) in one transaction.
 * control-api (POST /groupcalls, POST /calls) and media-app (transfers) both use it; whoever wrote
 * it publishes groupcall_created and call_created.
 */
import type { Db } from '../db/knex';
import { EMPTY_UUID, newId } from '../ids';
import { callsRepo, type Address, type CallRow } from '../repos/calls';
import { groupcallsRepo, type GroupcallRow } from '../repos/groupcalls';
import type { AnswerMethod, RingMethod } from './model';

export interface GroupcallSpec {
  customerId: string;
  source: Address;
  /** One Call per leg (its destination, and the metadata the outbound checks chose). */
  legs: { source?: Address; destination: Address; metadata?: Record<string, unknown> }[];
  destinations?: Address[];
  ringMethod: RingMethod;
  answerMethod: AnswerMethod;
  flowId?: string;
  masterCallId?: string;
  /** Call data (variables, anonymous). */
  data?: Record<string, unknown>;
}

export async function writeGroupcall(db: Db, spec: GroupcallSpec): Promise<{ groupcall: GroupcallRow; calls: CallRow[] }> {
  const id = newId();
  const run = async (trx: Db) => {
    const calls: CallRow[] = [];
    for (const leg of spec.legs) {
      calls.push(
        await callsRepo(trx).create({
          customer_id: spec.customerId,
          source: leg.source ?? spec.source,
          destination: leg.destination,
          direction: 'outgoing',
          status: 'dialing',
          type: 'flow',
          flow_id: spec.flowId ?? EMPTY_UUID,
          master_call_id: spec.masterCallId ?? EMPTY_UUID,
          groupcall_id: id,
          data: { early_execution: false, anonymous: 'no', ...(spec.data ?? {}) },
          metadata: leg.metadata ?? {},
        }),
      );
    }
    const groupcall = await groupcallsRepo(trx).create({
      id,
      customer_id: spec.customerId,
      source: spec.source,
      destinations: spec.destinations ?? spec.legs.map((l) => l.destination),
      ring_method: spec.ringMethod,
      answer_method: spec.answerMethod,
      flow_id: spec.flowId ?? EMPTY_UUID,
      master_call_id: spec.masterCallId ?? EMPTY_UUID,
      call_ids: calls.map((c) => c.id),
      call_count: calls.length,
    });
    return { groupcall, calls };
  };
  return db.isTransaction ? run(db) : db.transaction((trx) => run(trx));
}

/**
 * POST /calls: an extension or agent destination becomes a groupcall (ring_all, hangup_others) around
 * its one Call, as VoIPbin answers `{calls, groupcalls}` for such destinations.
 */
export const GROUPCALL_ADDRESS_TYPES: ReadonlySet<string> = new Set(['extension', 'agent']);

export async function wrapInGroupcall(db: Db, call: CallRow): Promise<{ groupcall: GroupcallRow; call: CallRow }> {
  const groupcall = await groupcallsRepo(db).create({
    customer_id: call.customer_id,
    source: call.source,
    destinations: [call.destination],
    ring_method: 'ring_all',
    answer_method: 'hangup_others',
    flow_id: call.flow_id,
    master_call_id: call.master_call_id,
    call_ids: [call.id],
    call_count: 1,
  });
  const [row] = await db('calls').where({ id: call.id }).update({ groupcall_id: groupcall.id }).returning('*');
  return { groupcall, call: row as CallRow };
}
